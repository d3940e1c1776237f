package report

// CheckPage is checkPage for the tests of package report_test, which fit a
// run through package pipeline before they report it.
var CheckPage = checkPage
