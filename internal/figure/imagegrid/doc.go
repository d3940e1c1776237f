// Package imagegrid draws data whose genes are the pixels of images — the
// calculator digits of the OrMachine paper — as a figure of small images:
// a fit's codes (posterior means of u) in one row, and for some cells the
// data and the posterior mean of their reconstruction, arranged in rows like
// the paper's Fig. calc. A figure is written as PNG (the images alone) and
// as SVG (the same images, embedded as PNG, with titles and labels).
//
// Genes name their pixel "r<row>c<col>" (0-based from the top left, as
// `scpipe simulate --kind digits` names them); Layout turns the names into
// positions, so that data of which only some pixels were kept (ingest's gene
// filter drops pixels never lit) are drawn in place, the rest left blank.
//
//	lay, err := imagegrid.Layout(geneNames)
//	fig := imagegrid.Figure{Title: "L = 7", Scale: 8, Rows: []imagegrid.Row{
//		{Label: "codes", Panels: []imagegrid.Panel{lay.Panel("code 1", values)}},
//	}}
//	err = fig.WritePNG(w)
package imagegrid
