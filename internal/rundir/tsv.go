package rundir

import "strings"

// TSVField renders s as one field of the tab-separated tables scpipe
// writes (summary.tsv, the cNMF tables of scpipe export, the tables of
// scpipe enrich), in the dialect of pandas' read_csv(sep="\t") (and
// Python's csv module): a field holding a double quote, a tab or a line
// break is put in double quotes with its quotes doubled; any other field
// is written as it is. Unquoted, a barcode that began with a quote made
// pandas merge ten rows into one label without an error.
func TSVField(s string) string {
	if !strings.ContainsAny(s, "\"\t\n\r") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// TSVLine renders fields as one line of such a table, with its newline.
func TSVLine(fields ...string) string {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(TSVField(f))
	}
	b.WriteByte('\n')
	return b.String()
}
