"""Reads an scpipe export with Debian's python3-anndata and checks it against
the fit's tables (as DuckDB read them: check-parquet.mjs's JSON).

    /usr/bin/python3 check-h5ad.py OUT.h5ad TABLES.json ONES
"""
import json
import sys

import anndata
import numpy as np

path, tables, ones = sys.argv[1], sys.argv[2], int(sys.argv[3])
cells, codes = json.load(open(tables))
assert cells["file"].endswith("cells.parquet") and codes["file"].endswith("codes.parquet"), (cells["file"], codes["file"])
a = anndata.read_h5ad(path)
L = int(a.uns["scpipe"]["L"])
cc = [c for c in cells["columns"] if c.startswith("code_")]
gc = [c for c in codes["columns"] if c.startswith("code_")]
crow = np.array([[r[cells["columns"].index(c)] for c in cc] for r in cells["rows"]], dtype=float)
grow = np.array([[r[codes["columns"].index(c)] for c in gc] for r in codes["rows"]], dtype=float)
barcodes = [r[cells["columns"].index("barcode")] for r in cells["rows"]]
gene_ids = [r[codes["columns"].index("gene_id")] for r in codes["rows"]]

checks = {
    "shape": a.shape == (len(barcodes), len(gene_ids)),
    "obsm shape": a.obsm["X_scpipe"].shape == (len(barcodes), L) == crow.shape,
    "barcodes": list(a.obs_names) == barcodes,
    "gene ids": list(a.var["gene_ids"]) == gene_ids,
    "usage values": np.array_equal(a.obsm["X_scpipe"], crow),
    "obs usage columns": all(np.array_equal(a.obs[f"scpipe_{k + 1}"].to_numpy(), crow[:, k]) for k in range(L)),
    "posterior means": np.array_equal(a.varm["scpipe_mean"], grow),
    "unique var names": a.var_names.is_unique,
    "X ones": int(a.X.sum()) == ones and a.X.nnz == ones,
    "programs": len(a.uns["scpipe"]["programs"]) == L,
}
if "sample" in cells["columns"]:
    # Shards of several samples: obs["sample"], as scanpy's concat(...,
    # label="sample") names it, whose categories sc.pl.umap(a,
    # color="sample") colours by (scanpy makes string columns categorical).
    samples = [r[cells["columns"].index("sample")] for r in cells["rows"]]
    checks["obs sample"] = list(a.obs["sample"].astype(str)) == samples
    checks["samples as categories"] = list(a.obs["sample"].astype("category").cat.categories) == sorted(set(samples))
    checks["barcodes end in their sample"] = all(b.endswith("-" + s) for b, s in zip(barcodes, samples))
for k, ok in checks.items():
    print(f"{'ok' if ok else 'FAIL'} {k}", file=sys.stderr)
if not all(checks.values()):
    sys.exit(1)
print(f"anndata {anndata.__version__} read {path}: {a.n_obs} cells x {a.n_vars} genes, L = {L}", file=sys.stderr)
