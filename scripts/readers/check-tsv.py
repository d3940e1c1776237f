"""Reads the tab-separated tables of scpipe export --cnmf and scpipe enrich
with pandas (Debian's python3-pandas), as cNMF's own loader reads them
(read_csv(sep="\t", index_col=0)), for a run whose barcodes and gene
symbols hold double quotes and whose library's term does too: every cell,
gene and term must come back as it was, none merged into another's row.

    /usr/bin/python3 check-tsv.py CNMF_DIR ENRICH_DIR BARCODES GENES TERM
"""
import glob
import os
import re
import sys

import pandas as pd

cnmf, enrich, barcodes_file, genes_file, term = sys.argv[1:6]
barcodes = [l.rstrip("\n") for l in open(barcodes_file, encoding="utf-8")]
symbols = [(l.rstrip("\n").split("\t") + [""])[:2][-1] or l.rstrip("\n").split("\t")[0] for l in open(genes_file, encoding="utf-8")]
# scpipe names genes by symbol, repeated ones told apart by a suffix (-1),
# as pandas tells repeated column names apart (.1) and R (TAP2.1): all are
# the input's symbols.
base = lambda s: re.sub(r"[.-][1-9][0-9]*$", "", s)
symbols = set(symbols) | {base(s) for s in symbols}
is_symbol = lambda s: s in symbols or base(s) in symbols
failed = []


def check(what, ok):
    if not ok:
        failed.append(what)


def read(path, **kw):
    # keep_default_na=False: a symbol such as NA is a name here, not a missing value.
    return pd.read_csv(path, sep="\t", keep_default_na=False, **kw)


usages = sorted(glob.glob(os.path.join(cnmf, "scpipe", "scpipe.usages.k_*.consensus.txt")))
check("cNMF usages tables", len(usages) > 0)
for path in usages:
    u = read(path, index_col=0)
    check(f"{path}: {len(u)} rows for {len(barcodes)} cells", list(u.index) == barcodes)
quoted = [s for s in symbols if '"' in s]
check("a gene symbol with a quote in the input", len(quoted) > 0)
for kind in ("spectra.k_*.consensus", "gene_spectra_score.k_*"):
    for path in sorted(glob.glob(os.path.join(cnmf, "scpipe", f"scpipe.{kind}.txt"))):
        t = read(path, index_col=0)
        cols = list(t.columns)
        check(f"{path}: {len(cols)} gene columns, all of them symbols of the input", all(is_symbol(c) for c in cols) and len(cols) > 1000)
        check(f"{path}: the quoted symbols kept", all(q in cols for q in quoted))
for path in sorted(glob.glob(os.path.join(cnmf, "scpipe", "scpipe.top_genes.k_*.txt"))):
    t = read(path, index_col=0)
    vals = [v for c in t.columns for v in t[c] if v != ""]
    check(f"{path}: top genes are symbols of the input", len(vals) > 0 and all(is_symbol(v) for v in vals))

for path in sorted(glob.glob(os.path.join(enrich, "**", "*.tsv"), recursive=True)):
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
    t = read(path)
    check(f"{path}: columns {list(t.columns)} != its header", list(t.columns) == header)
    if "Term" in t.columns:
        check(f"{path}: the quoted term read back", term in set(t["Term"]))
        genes = [g for gs in t["Genes"] for g in gs.split(";") if g]
        check(f"{path}: overlap genes are symbols of the input", all(is_symbol(g) for g in genes))
    if "symbol" in t.columns:
        check(f"{path}: symbols of the input", all(is_symbol(s) for s in t["symbol"]))

if failed:
    print("check-tsv: " + "\ncheck-tsv: ".join(failed), file=sys.stderr)
    sys.exit(1)
print(f"check-tsv: {len(usages)} usages tables of {len(barcodes)} cells, the spectra, top genes and enrich's tables read back by pandas")
