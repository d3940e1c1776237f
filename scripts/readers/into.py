"""The --into check, with Debian's python3-anndata.

    /usr/bin/python3 into.py make USER.h5ad TABLES.json
        writes a user's file of the run's cells: shuffled, with X, an obsm
        X_umap, a layer, obs and var columns and uns entries of its own;
    /usr/bin/python3 into.py check USER.h5ad OUT.h5ad TABLES.json
        checks that OUT (scpipe export --into USER) keeps every key and
        value of USER and adds X_scpipe in USER's order of cells, equal to
        cells.parquet.
"""
import json
import sys

import anndata
import numpy as np
import pandas as pd
import scipy.sparse as sp

mode, user = sys.argv[1], sys.argv[2]
cells, codes = json.load(open(sys.argv[-1]))
barcodes = [r[cells["columns"].index("barcode")] for r in cells["rows"]]
gene_ids = [r[codes["columns"].index("gene_id")] for r in codes["rows"]]
usage = np.array([[r[cells["columns"].index(c)] for c in cells["columns"] if c.startswith("code_")] for r in cells["rows"]])
rng = np.random.default_rng(7)

if mode == "make":
    order = rng.permutation(len(barcodes))
    n, d = len(barcodes), len(gene_ids)
    a = anndata.AnnData(
        X=sp.random(n, d, density=0.05, format="csr", random_state=1, dtype=np.float32),
        obs=pd.DataFrame({"louvain": pd.Categorical(rng.choice(["a", "b"], n)), "n_counts": rng.random(n)},
                         index=[barcodes[i] for i in order]),
        var=pd.DataFrame({"highly_variable": rng.random(d) > 0.5}, index=gene_ids),
    )
    a.obsm["X_umap"] = rng.random((n, 2))
    a.layers["counts"] = a.X.copy()
    a.uns["louvain_colors"] = np.array(["#ff0000", "#00ff00"])
    a.uns["neighbors"] = {"params": {"n_neighbors": 15}}
    a.write_h5ad(user)
    sys.exit(0)

out = sys.argv[3]
u, o = anndata.read_h5ad(user), anndata.read_h5ad(out)
checks = {
    "X kept": (u.X != o.X).nnz == 0,
    "obs kept": u.obs.equals(o.obs),
    "var kept": u.var.equals(o.var),
    "obsm X_umap kept": np.array_equal(u.obsm["X_umap"], o.obsm["X_umap"]),
    "layers kept": (u.layers["counts"] != o.layers["counts"]).nnz == 0,
    "uns kept": list(o.uns["louvain_colors"]) == list(u.uns["louvain_colors"]) and o.uns["neighbors"]["params"]["n_neighbors"] == 15,
    "keys kept": all(set(getattr(u, k).keys()) <= set(getattr(o, k).keys()) for k in ["obsm", "varm", "layers", "uns", "obsp"]),
    "X_scpipe in the file's order": np.array_equal(o.obsm["X_scpipe"], usage[[barcodes.index(b) for b in u.obs_names]]),
    "varm rows": o.varm["scpipe_mean"].shape == (u.n_vars, usage.shape[1]),
}
for k, ok in checks.items():
    print(f"{'ok' if ok else 'FAIL'} --into: {k}", file=sys.stderr)
sys.exit(0 if all(checks.values()) else 1)
