// Package predictive gives a fit's predictive probability of each entry
// from its tables in the run directory (section 3.3 of the paper): the
// plug-in estimate, the posterior means of U and Z put into the
// likelihood. The run's summary scores its held-out entries with it, and
// so does scpipe evaluate (which scores the truth's targets with the
// plug-in coverage, 1 − Means.Uncovered), in the same order and rounding and
// in chunks of CellChunk cells, so that their held-out scores agree to the
// bit.
//
//	m := predictive.Means{L: L, Z: cells.Mean, U: codes.Mean, Housekeeping: codes.Housekeeping}
//	q := predictive.NewPlugIn(trace[len(trace)-1], cells, codes)
//	used := m.Used(n, nil)
//	p := q.P(n, d, m.Uncovered(n, d, used)) // P(x_nd = 1)
package predictive
