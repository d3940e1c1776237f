package report

import (
	"bytes"
	"fmt"
	"html/template"
)

// render writes the page as one HTML document. It holds no script and
// names no address: figures are inline SVG, their raster heat maps PNG
// data URIs, and the style sheet is in the page.
func (pg *page) render() ([]byte, error) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, pg); err != nil {
		return nil, fmt.Errorf("report: render the page: %w", err)
	}
	return b.Bytes(), nil
}

// SummaryLambda reports whether some fit has a λ (symmetric noise).
func (pg *page) SummaryLambda() bool {
	for _, s := range pg.Summary {
		if s.HasLambda {
			return true
		}
	}
	return false
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; color: #222; margin: 0 auto; max-width: 1280px; padding: 0 24px 48px; line-height: 1.4; }
h1 { font-size: 1.6em; margin: 24px 0 8px; }
h2 { font-size: 1.3em; margin: 32px 0 8px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
nav { font-size: 0.9em; margin: 8px 0 16px; }
nav a { margin-right: 10px; }
p.facts { margin: 4px 0; }
ul.notes { background: #fff8e1; border-left: 4px solid #E69F00; padding: 8px 8px 8px 28px; font-size: 0.9em; }
figure { margin: 12px 0; }
figure .svg { overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
figure.wide svg { max-width: none; }
figure svg image { image-rendering: pixelated; }
figcaption { font-size: 0.85em; color: #444; max-width: 900px; }
.pair { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.pair .left { flex: 3 1 600px; min-width: 0; }
.pair figure.cells { flex: 1 1 300px; }
table { border-collapse: collapse; font-size: 0.85em; margin: 8px 0; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.noprogram td { color: #888; }
ul.terms { margin: 0; padding-left: 14px; }
td.genes { max-width: 260px; }
li.ns { color: #999; }
.warn { color: #b00020; }
tr.recommended td { font-weight: bold; }
h3 { font-size: 1.1em; margin: 20px 0 6px; }
.lib { color: #777; font-size: 0.9em; }
footer { margin-top: 40px; font-size: 0.85em; color: #666; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Facts}}<p class="facts">{{.}}</p>
{{end}}{{if .Notes}}<ul class="notes">
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
{{end}}<nav>{{if .Answer}}<a href="#answer">Answer</a>{{end}}{{if .Selection}}<a href="#selection">Model selection</a>{{end}}<a href="#traces">Traces</a>{{if .Hierarchy}}<a href="#hierarchy">Programs across L</a>{{end}}{{if .Samples}}<a href="#samples">Samples</a>{{end}}{{range .Levels}}<a href="#{{.ID}}">L = {{.L}}</a>{{end}}</nav>
{{with .Answer}}<section id="answer">
<h2>Answer: L = {{.L}}</h2>
<p class="facts">{{.Why}}</p>
<table>
<tr><th>L</th><th>held-out log pred. ± SE</th><th>gap to the best L ± SE</th><th>chains agree</th><th>agreement (worst chain)</th><th>stable programs</th><th>R̂ within chains</th></tr>
{{range .Convergence}}<tr{{if .Recommended}} class="recommended"{{end}}><td class="num">{{.L}}{{if .Recommended}} ◀ recommended{{end}}</td><td class="num">{{.LogPred}}</td><td class="num">{{.Gap}}</td><td{{if .NotConverged}} class="warn"{{end}}>{{.Converged}}</td><td class="num">{{.Agreement}}</td><td class="num">{{.Stable}}</td><td class="num">{{.RHat}}</td></tr>
{{end}}</table>
{{with .Level}}<h3>The programs of L = {{.L}}</h3>
<p class="facts">{{.Facts}}</p>
{{template "codes" .Codes}}
{{end}}</section>
{{end}}
{{if .Selection}}<section id="selection">
<h2>Model selection</h2>
{{template "figure" .Selection}}
<table>
<tr><th>L</th><th>chain</th><th>sweeps</th><th>held-out log pred.</th><th>held-out accuracy</th><th>log-likelihood</th><th>training accuracy</th><th>dropout</th><th>background</th>{{if .SummaryLambda}}<th>λ</th>{{end}}<th>R̂ (log-lik.)</th><th>agreement with chain 1</th><th>seconds</th></tr>
{{$lambda := .SummaryLambda}}{{range .Summary}}<tr><td class="num">{{.L}}</td><td class="num">{{.Chain}}</td><td class="num">{{.Sweeps}}</td><td class="num">{{.HeldoutLogPred}}</td><td class="num">{{.HeldoutAccuracy}}</td><td class="num">{{.LogLik}}</td><td class="num">{{.TrainAccuracy}}</td><td class="num">{{.Dropout}}</td><td class="num">{{.Background}}</td>{{if $lambda}}<td class="num">{{.Lambda}}</td>{{end}}<td class="num">{{.RHat}}</td><td class="num">{{.Agreement}}</td><td class="num">{{.Seconds}}</td></tr>
{{end}}</table>
</section>
{{end}}<section id="traces">
<h2>Traces</h2>
{{template "figure" .Traces}}
</section>
{{with .Hierarchy}}<section id="hierarchy">
<h2>Programs across L</h2>
{{template "figure" .}}
</section>
{{end}}{{with .Samples}}<section id="samples">
<h2>Programs per sample</h2>
<p class="facts">{{.Facts}}</p>
{{template "figure" .Figure}}
<table>
<tr><th>code</th>{{range .Names}}<th>{{.}}</th>{{end}}<th>cells</th><th>largest share of the program's cells</th></tr>
{{range .Rows}}<tr><td class="num">{{.Code}}</td>{{range .Shares}}<td class="num">{{.}}</td>{{end}}<td class="num">{{.Cells}}</td><td{{if .Specific}} class="warn"{{end}}>{{.Top}}{{if .Specific}}: sample-specific: biology or a batch effect?{{end}}</td></tr>
{{end}}</table>
</section>
{{end}}{{range .Levels}}{{$L := .L}}<section id="{{.ID}}">
<h2>L = {{.L}}</h2>
<p class="facts">{{.Facts}}</p>
<div class="pair">
<div class="left">
{{with .Genes}}{{template "figure" .}}{{end}}
{{template "codes" .Codes}}
{{with .Housekeeping}}<p class="facts">Housekeeping code (every cell uses it; it is not one of the {{$L}} codes): {{.Genes}} genes{{if .TopGenes}}; those the programs' cells detect most evenly: {{range $i, $g := .TopGenes}}{{if $i}}, {{end}}<bdi>{{$g}}</bdi>{{end}}{{end}}.</p>
{{end}}</div>
{{with .Cells}}{{template "figure" .}}{{end}}
</div>
</section>
{{end}}<footer>
<p>Written by scpipe report. Every figure is also a standalone SVG file in {{.FiguresDir}}/. This page holds no script and loads nothing: it reads the same offline.</p>
</footer>
</body>
</html>
{{define "codes"}}<table>
<tr><th>code</th><th>program</th><th>genes</th><th>unique</th><th>cells</th><th>stability</th><th>across L</th><th>top genes (score)</th><th>top terms of the top genes (adjusted p)</th></tr>
{{range .}}<tr{{if not .IsProgram}} class="noprogram"{{end}}><td class="num">{{.Code}}</td><td>{{.Program}}{{if not .IsProgram}} ({{.Status}}){{end}}</td><td class="num">{{.Genes}}</td><td class="num">{{.Unique}}</td><td class="num">{{.Cells}}</td><td class="num">{{.Stability}}{{if .IsProgram}}{{if .Stable}} stable{{else}} <span class="warn">unstable</span>{{end}}{{end}}</td><td>{{.Event}}{{if .Parent}} from {{.Parent}}{{end}}</td><td class="genes">{{range $i, $g := .TopGenes}}{{if $i}}, {{end}}<bdi>{{$g.Symbol}}</bdi> ({{$g.Score}}){{end}}</td><td>{{if .Terms}}<ul class="terms">{{range .Terms}}<li{{if not .Significant}} class="ns"{{end}}><bdi>{{.Term}}</bdi> <b>{{.AdjP}}</b> <span class="lib">{{.Library}}, {{.Query}} genes, {{.Overlap}}</span></li>{{end}}</ul>{{end}}</td></tr>
{{end}}</table>{{end}}
{{define "figure"}}<figure id="fig-{{.ID}}" class="{{.Class}}">
<div class="svg">{{.Inline}}</div>
<figcaption><b>{{.Title}}.</b> {{.Caption}} <span class="lib">({{.File}})</span></figcaption>
</figure>{{end}}
`))
