package scpipe_test

// This test holds every package of the module to its row in
// ARCHITECTURE.md's package table: a package imports only the standard
// library and what its row's "may import" column names, every package has
// a row, and every row names a package. The imports are read with
// go/parser from every non-test file, whatever its build constraints, so
// that the assembly's amd64-only imports and the pure-Go twins' count
// alike.

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rule is one row of the package table.
type rule struct {
	pkg   string          // import path
	allow map[string]bool // project packages and module paths it may import
	named []string        // the allowances the row names one by one (not "every package below")
}

// TestImportsFollowArchitecture fails when a package imports something its
// row in ARCHITECTURE.md does not allow, has no row, or when a row names a
// package that does not exist or an import its package does not make.
func TestImportsFollowArchitecture(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	module, err := modulePath("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseArchitecture(string(doc), module)
	if err != nil {
		t.Fatalf("ARCHITECTURE.md: %v", err)
	}
	pkgs, err := moduleImports(".", module)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found %d packages under the module root; the walk is broken", len(pkgs))
	}
	for _, p := range checkImports(rules, pkgs, module) {
		t.Error(p)
	}
}

// TestCheckImports runs the checker on a made-up module, one problem of each
// kind, so that TestImportsFollowArchitecture is known to be able to fail.
func TestCheckImports(t *testing.T) {
	const doc = "# m\n\n" +
		"| package | one job | may import |\n" +
		"| --- | --- | --- |\n" +
		"| `cmd/m` | flags | every package below; cli |\n" +
		"| `a` | A (reads; never `c`) | `b`, x/sys/cpu |\n" +
		"| `b` | B | — |\n" +
		"| `gone` | nothing any more | — |\n" +
		"\n" +
		"| short name | path |\n" +
		"| --- | --- |\n" +
		"| cli | `github.com/urfave/cli/v2` |\n" +
		"| x/sys/cpu | `golang.org/x/sys/cpu` |\n"
	rules, err := parseArchitecture(doc, "m")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		pkgs map[string][]string
		want []string // substrings of the problems, in order
	}{
		{"all allowed", map[string][]string{
			"m/cmd/m": {"m/a", "m/b", "github.com/urfave/cli/v2", "os"},
			"m/a":     {"m/b", "golang.org/x/sys/cpu", "fmt"},
			"m/b":     {"math/bits"},
			"m/gone":  nil,
		}, nil},
		{"import not allowed", map[string][]string{
			"m/cmd/m": {"m/a", "github.com/urfave/cli/v2"},
			"m/a":     {"m/b", "golang.org/x/sys/cpu", "m/c", "golang.org/x/sys/unix"},
			"m/b":     {"m/a"},
			"m/gone":  nil,
		}, []string{"m/a imports m/c", "m/a imports golang.org/x/sys/unix", "m/b imports m/a"}},
		{"below is not above", map[string][]string{
			"m/cmd/m": {"github.com/urfave/cli/v2"},
			"m/a":     {"m/b", "golang.org/x/sys/cpu", "m/cmd/m"},
			"m/b":     nil,
			"m/gone":  nil,
		}, []string{"m/a imports m/cmd/m"}},
		{"package without a row", map[string][]string{
			"m/cmd/m": {"github.com/urfave/cli/v2"}, "m/a": {"m/b", "golang.org/x/sys/cpu"}, "m/b": nil, "m/gone": nil,
			"m/new": {"fmt"},
		}, []string{"package m/new has no row"}},
		{"row without a package, allowance unused", map[string][]string{
			"m/cmd/m": {"github.com/urfave/cli/v2"}, "m/a": {"m/b"}, "m/b": nil,
		}, []string{"row `a` allows golang.org/x/sys/cpu, which m/a does not import", "row `gone` names no package"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := checkImports(rules, tc.pkgs, "m")
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// TestParseArchitectureErrors checks that a table the checker cannot read
// is an error naming the row, not an empty set of rules.
func TestParseArchitectureErrors(t *testing.T) {
	const head = "| package | one job | may import |\n| --- | --- | --- |\n"
	const legend = "\n| short name | path |\n| --- | --- |\n| cli | `github.com/urfave/cli/v2` |\n"
	tests := []struct{ name, doc, want string }{
		{"no table", "# nothing here\n" + legend, "no package table"},
		{"no legend", head + "| `a` | A | cli |\n", "no table of short names"},
		{"unknown name", head + "| `a` | A | `b`, zstd |\n" + legend, "row `a`: cannot read \"zstd\""},
		{"short row", head + "| `a` | A |\n" + legend, "row 1 has 2 cells"},
		{"package not in backticks", head + "| a | A | — |\n" + legend, "row 1: the package"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseArchitecture(tc.doc, "m")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// parseArchitecture reads the package table ("| package | one job | may
// import |") and the table of short names ("| short name | path |") of an
// ARCHITECTURE.md whose module is module. In the "may import" column,
// items are separated by commas or semicolons and text in parentheses is
// commentary: an item is a project package in backticks, a short name, "—"
// for nothing but the standard library, or "every package below", which
// allows the packages of the rows after it.
func parseArchitecture(doc, module string) ([]rule, error) {
	pkgRows := tableRows(doc, []string{"package", "one job", "may import"})
	if pkgRows == nil {
		return nil, fmt.Errorf("no package table (| package | one job | may import |)")
	}
	nameRows := tableRows(doc, []string{"short name", "path"})
	if nameRows == nil {
		return nil, fmt.Errorf("no table of short names (| short name | path |)")
	}
	short := map[string]string{}
	for i, r := range nameRows {
		if len(r) != 2 {
			return nil, fmt.Errorf("short names: row %d has %d cells, want 2", i+1, len(r))
		}
		p, ok := backticked(r[1])
		if !ok {
			return nil, fmt.Errorf("short names: row %d: the path %q is not in backticks", i+1, r[1])
		}
		short[r[0]] = p
	}
	rules := make([]rule, len(pkgRows))
	for i, r := range pkgRows {
		if len(r) != 3 {
			return nil, fmt.Errorf("package table: row %d has %d cells, want 3", i+1, len(r))
		}
		name, ok := backticked(r[0])
		if !ok {
			return nil, fmt.Errorf("package table: row %d: the package %q is not in backticks", i+1, r[0])
		}
		rules[i] = rule{pkg: module + "/" + name, allow: map[string]bool{}}
	}
	for i, r := range pkgRows {
		name, _ := backticked(r[0])
		for _, item := range splitItems(r[2]) {
			switch p, quoted := backticked(item); {
			case item == "—":
			case item == "every package below":
				for _, below := range rules[i+1:] {
					rules[i].allow[below.pkg] = true
				}
			case quoted:
				rules[i].allow[module+"/"+p] = true
				rules[i].named = append(rules[i].named, module+"/"+p)
			case short[item] != "":
				rules[i].allow[short[item]] = true
				rules[i].named = append(rules[i].named, short[item])
			default:
				return nil, fmt.Errorf("package table: row `%s`: cannot read %q in its may-import column: want a package in backticks, a short name, \"every package below\" or —", name, item)
			}
		}
	}
	return rules, nil
}

// tableRows returns the cells of the rows of the first Markdown table
// whose header is header, or nil if there is none.
func tableRows(doc string, header []string) [][]string {
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if !slices.Equal(cells(l), header) {
			continue
		}
		var rows [][]string
		for _, l := range lines[min(i+2, len(lines)):] {
			if !strings.HasPrefix(strings.TrimSpace(l), "|") {
				break
			}
			rows = append(rows, cells(l))
		}
		return rows
	}
	return nil
}

// cells splits a Markdown table row into its trimmed cells.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	cs := strings.Split(line[1:len(line)-1], "|")
	for i := range cs {
		cs[i] = strings.TrimSpace(cs[i])
	}
	return cs
}

// backticked returns s without its backticks if s is one code span.
func backticked(s string) (string, bool) {
	if len(s) > 2 && s[0] == '`' && s[len(s)-1] == '`' && !strings.Contains(s[1:len(s)-1], "`") {
		return s[1 : len(s)-1], true
	}
	return s, false
}

var parenthesised = regexp.MustCompile(`\([^()]*\)`)

// splitItems drops the parenthesised commentary of a may-import cell and
// returns its items.
func splitItems(cell string) []string {
	for {
		c := parenthesised.ReplaceAllString(cell, "")
		if c == cell {
			break
		}
		cell = c
	}
	var items []string
	for _, it := range strings.FieldsFunc(cell, func(r rune) bool { return r == ',' || r == ';' }) {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	return items
}

// checkImports lists what breaks the rules in pkgs (import path → imports):
// imports outside the standard library that a package's row does not allow,
// packages without a row, rows without a package, and imports a row names
// that its package does not make.
func checkImports(rules []rule, pkgs map[string][]string, module string) []string {
	var problems []string
	byPkg := map[string]rule{}
	for _, r := range rules {
		byPkg[r.pkg] = r
	}
	for _, p := range sortedKeys(pkgs) {
		r, ok := byPkg[p]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s has no row in ARCHITECTURE.md's package table: add `%s` with its one job and what it may import",
				p, strings.TrimPrefix(p, module+"/")))
			continue
		}
		for _, imp := range pkgs[p] {
			if standard(imp, module) || allowed(r.allow, imp) {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s imports %s, which its row in ARCHITECTURE.md does not allow: change the import, or the row if the design changed", p, imp))
		}
	}
	for _, r := range rules {
		imps, ok := pkgs[r.pkg]
		if !ok {
			continue
		}
		for _, n := range r.named {
			if !slices.ContainsFunc(imps, func(imp string) bool { return within(imp, n) }) {
				problems = append(problems, fmt.Sprintf("row `%s` allows %s, which %s does not import: drop it from ARCHITECTURE.md",
					strings.TrimPrefix(r.pkg, module+"/"), n, r.pkg))
			}
		}
	}
	for _, r := range rules {
		if _, ok := pkgs[r.pkg]; !ok {
			problems = append(problems, fmt.Sprintf("row `%s` names no package of the module: remove it from ARCHITECTURE.md", strings.TrimPrefix(r.pkg, module+"/")))
		}
	}
	return problems
}

// standard reports whether imp is in the standard library: its first
// element has no dot, and it is not one of the module's own packages.
func standard(imp, module string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".") && imp != module && !strings.HasPrefix(imp, module+"/")
}

// allowed reports whether imp is one of allow's project packages, or a
// package of (within) one of its module paths.
func allowed(allow map[string]bool, imp string) bool {
	for a := range allow {
		if within(imp, a) {
			return true
		}
	}
	return false
}

// within reports whether the import path imp is path or below it.
func within(imp, path string) bool {
	return imp == path || strings.HasPrefix(imp, path+"/")
}

// moduleImports returns, for every package under root (directories holding
// non-test .go files, but testdata, vendor, hidden ones and nested
// modules), its import path and the sorted imports of its non-test files,
// all build constraints included.
func moduleImports(root, module string) (map[string][]string, error) {
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root {
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		imps, any, err := dirImports(path)
		if err != nil || !any {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		ip := module
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		pkgs[ip] = imps
		return nil
	})
	return pkgs, err
}

// dirImports returns the sorted, distinct imports of the non-test .go files
// of dir, and whether there are any such files.
func dirImports(dir string) ([]string, bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, err
	}
	seen := map[string]bool{}
	found := false
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		found = true
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ImportsOnly)
		if err != nil {
			return nil, false, err
		}
		for _, s := range f.Imports {
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return nil, false, fmt.Errorf("%s: import %s: %w", fset.Position(s.Pos()), s.Path.Value, err)
			}
			seen[p] = true
		}
	}
	return sortedKeys(seen), found, nil
}

// modulePath returns the module path declared in the go.mod file at path.
func modulePath(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module line", path)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestRootFollowsLayout holds the module's root to ARCHITECTURE.md's layout
// table: every folder at the root that holds Go code has a row, every row
// names a folder, the rows number at most 13 (issue 42), and no Go file
// stands at the root but this one.
func TestRootFollowsLayout(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkRoot(string(doc), ".") {
		t.Error(p)
	}
}

// TestCheckRoot runs checkRoot on made-up roots, one problem of each kind,
// so that TestRootFollowsLayout is known to be able to fail.
func TestCheckRoot(t *testing.T) {
	table := func(folders ...string) string {
		s := "# m\n\n| folder | why it stands at the root |\n| --- | --- |\n"
		for _, f := range folders {
			s += "| `" + f + "/` | it does |\n"
		}
		return s
	}
	many := make([]string, 14)
	for i := range many {
		many[i] = fmt.Sprintf("f%02d", i)
	}
	tests := []struct {
		name  string
		doc   string
		files []string // made under the root
		want  []string // substrings of the problems, in order
	}{
		{"as laid out", table("a", "docs"), []string{"a/a.go", "a/internal/b/b.go", "docs/x.md", "architecture_test.go", "out/run.tsv", ".ci/run"}, nil},
		{"Go folder without a row", table("a"), []string{"a/a.go", "b/c/c.go"}, []string{"folder b/ holds Go code"}},
		{"row without a folder", table("a", "gone"), []string{"a/a.go"}, []string{"row `gone/` names no folder"}},
		{"Go file at the root", table("a"), []string{"a/a.go", "e2e_test.go", "main.go"}, []string{"e2e_test.go stands at the root", "main.go stands at the root"}},
		{"too many rows", table(many...), nil, []string{"14 rows"}},
		{"no table", "# m\n", nil, []string{"no layout table"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(root, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.name == "too many rows" {
				for _, f := range many {
					if err := os.Mkdir(filepath.Join(root, f), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := checkRoot(tc.doc, root)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// checkRoot lists what breaks the layout table of doc (| folder | why it
// stands at the root |) in the folder root: a folder holding Go code that
// has no row (hidden folders, testdata and vendor aside), a row naming no
// folder, more than 13 rows, and Go files at the root other than
// architecture_test.go. Folders without Go code and without a row (a run a
// developer wrote there) are not the layout's.
func checkRoot(doc, root string) []string {
	rows := tableRows(doc, []string{"folder", "why it stands at the root"})
	if rows == nil {
		return []string{"ARCHITECTURE.md has no layout table (| folder | why it stands at the root |)"}
	}
	var problems []string
	named := map[string]bool{}
	for i, r := range rows {
		f, ok := backticked(r[0])
		if !ok || !strings.HasSuffix(f, "/") || strings.Count(f, "/") != 1 {
			problems = append(problems, fmt.Sprintf("layout table: row %d: want one folder in backticks, ending in /, not %q", i+1, r[0]))
			continue
		}
		named[strings.TrimSuffix(f, "/")] = true
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, e := range entries {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_"):
		case e.IsDir():
			if !named[n] && n != "testdata" && n != "vendor" && holdsGo(filepath.Join(root, n)) {
				problems = append(problems, fmt.Sprintf("folder %s/ holds Go code but has no row in ARCHITECTURE.md's layout table: move it where it serves, or justify it there in one line", n))
			}
		case strings.HasSuffix(n, ".go") && n != "architecture_test.go":
			problems = append(problems, fmt.Sprintf("%s stands at the root, where no Go file but architecture_test.go belongs: move it into the package it serves (a test of the binary into cmd/scpipe)", n))
		}
	}
	for _, f := range sortedKeys(named) {
		if fi, err := os.Stat(filepath.Join(root, f)); err != nil || !fi.IsDir() {
			problems = append(problems, fmt.Sprintf("row `%s/` names no folder at the root: remove it from ARCHITECTURE.md's layout table", f))
		}
	}
	if len(rows) > 13 {
		problems = append(problems, fmt.Sprintf("ARCHITECTURE.md's layout table has %d rows: the root holds at most 13 folders (the card's stages, cmd, configs, scripts, docs, internal, and three stages a user runs)", len(rows)))
	}
	return problems
}

// holdsGo reports whether a .go file lies anywhere under dir.
func holdsGo(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".go") {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}
