package report

// CheckPage is checkPage for the tests of package report_test, which run
// the pipeline (and so cannot be in package report: pipeline imports it).
var CheckPage = checkPage
