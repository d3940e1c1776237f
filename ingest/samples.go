package ingest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"scpipe/internal/infile"
	"scpipe/shard"
)

// Several samples: Options.Samples names several inputs (a study's donors,
// lanes or libraries), which Run reads as one matrix whose cells are the
// samples' cells one sample after another, in the order given, and whose
// genes are the samples' genes matched by id (see GeneJoin). Nothing is
// held per sample beyond what one input holds (its cell pointers,
// barcodes and gene names): the entries stream through the same two
// passes, the filters are counted over every cell, and the ambient RNA's
// levels are measured per sample (ambient.go), since a droplet catches
// the free mRNA of its own sample only. A cell's barcode becomes
// barcode-NAME, as scanpy's concat(..., index_unique="-") writes it, and
// the manifest lists the samples with the rows their cells take
// (shard.Manifest.Samples).

// Sample is one input of an ingest of several samples.
type Sample struct {
	// Name names the sample: its cells' barcodes end in "-" + Name.
	Name string
	// Path is the sample's input: anything Options.Input may be.
	Path string
	// Values holds the sample's values of Options.SampleColumns.
	Values []string
}

// GeneJoin says how the genes of several samples are matched.
type GeneJoin string

// The ways of matching the genes of several samples, by id (a gene id that
// an input repeats is matched occurrence by occurrence).
const (
	// GenesSame refuses samples whose genes of the kept feature type
	// differ (their order may differ).
	GenesSame GeneJoin = ""
	// GenesIntersect keeps the genes that every sample holds.
	GenesIntersect GeneJoin = "intersect"
	// GenesUnion keeps the genes of any sample; a gene a sample does not
	// hold is unobserved in that sample's cells (the shards' observed
	// mask), not 0.
	GenesUnion GeneJoin = "union"
)

// ParseGeneJoin reads the --genes value of several samples.
func ParseGeneJoin(s string) (GeneJoin, error) {
	switch j := GeneJoin(s); j {
	case GenesIntersect, GenesUnion:
		return j, nil
	case "same":
		return GenesSame, nil
	}
	return "", fmt.Errorf("ingest: genes %q: want intersect or union (or same, the default: refuse samples whose genes differ)", s)
}

// maxSamples is the most samples one ingest takes: a cell's sample is
// held in 16 bits (shard.Manifest.CellSamples).
const maxSamples = 1 << 16

// SamplesFromPaths names the inputs paths as samples: each by its file or
// folder name less the extensions ingest reads (.h5, .h5ad, .mtx, .gz),
// or, where those repeat (every CellRanger output is called
// filtered_feature_bc_matrix.h5), by the first folder of the paths that
// tells them apart.
func SamplesFromPaths(paths []string) ([]Sample, error) {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = stripInputExt(filepath.Base(filepath.Clean(p)))
	}
	if len(paths) > 1 && hasRepeat(names) {
		parts := make([][]string, len(paths))
		for i, p := range paths {
			parts[i] = strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
		}
		for k := 0; ; k++ {
			var col []string
			for _, ps := range parts {
				if k < len(ps) {
					col = append(col, stripInputExt(ps[k]))
				}
			}
			if len(col) < len(paths) {
				return nil, fmt.Errorf("ingest: %s and others: cannot name the samples from their paths; name them in a samples file (--samples: a header, then name<TAB>path)", paths[0])
			}
			if !allEqual(col) {
				if hasRepeat(col) {
					return nil, fmt.Errorf("ingest: %s and others: the paths do not name the samples apart; name them in a samples file (--samples: a header, then name<TAB>path)", paths[0])
				}
				copy(names, col)
				break
			}
		}
	}
	s := make([]Sample, len(paths))
	for i := range paths {
		s[i] = Sample{Name: names[i], Path: paths[i]}
	}
	return s, checkSamples(s, nil, "the inputs")
}

func stripInputExt(name string) string {
	for _, ext := range []string{".gz", ".h5ad", ".h5", ".hdf5", ".mtx"} {
		if n := strings.TrimSuffix(name, ext); n != "" {
			name = n
		}
	}
	return name
}

func allEqual(s []string) bool {
	for _, x := range s {
		if x != s[0] {
			return false
		}
	}
	return true
}

func hasRepeat(s []string) bool {
	a, _ := firstRepeat(s)
	return a >= 0
}

// ReadSamplesFile reads a samples file: a header line, then one line per
// sample, tab-separated: the sample's name, its input's path (relative
// paths from the samples file's folder), then any further columns, which
// the header names and the shards keep as the cells' metadata. It returns
// the further columns' names and the samples.
func ReadSamplesFile(path string) (columns []string, samples []Sample, err error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("ingest: samples file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	var header []string
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if !utf8.ValidString(text) {
			return nil, nil, fmt.Errorf("ingest: %s line %d: not UTF-8 text", path, line)
		}
		fields := strings.Split(text, "\t")
		if header == nil {
			if len(fields) < 2 {
				return nil, nil, fmt.Errorf("ingest: %s line %d: a header of at least two tab-separated columns (name, path) expected, got %q", path, line, text)
			}
			header, columns = fields, fields[2:]
			continue
		}
		if len(fields) != len(header) {
			return nil, nil, fmt.Errorf("ingest: %s line %d: %d tab-separated fields, the header has %d", path, line, len(fields), len(header))
		}
		p := fields[1]
		if p != "" && !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		samples = append(samples, Sample{Name: fields[0], Path: p, Values: fields[2:]})
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("ingest: %s: %w", path, err)
	}
	if len(samples) == 0 {
		return nil, nil, fmt.Errorf("ingest: %s: no sample (a header, then name<TAB>path lines)", path)
	}
	return columns, samples, checkSamples(samples, columns, path)
}

// checkSamples checks the samples' names and paths and the metadata
// columns' names; where says where they come from.
func checkSamples(s []Sample, columns []string, where string) error {
	if len(s) > maxSamples {
		return fmt.Errorf("ingest: %s: %d samples, at most %d", where, len(s), maxSamples)
	}
	for i, c := range columns {
		if err := checkSampleName(c); err != nil {
			return fmt.Errorf("ingest: %s: column %d's name %q: %w", where, i+3, c, err)
		}
		if c == "sample" || slices.Contains(columns[:i], c) {
			return fmt.Errorf("ingest: %s: column %q named twice (sample is the first column's)", where, c)
		}
	}
	for i, x := range s {
		if err := checkSampleName(x.Name); err != nil {
			return fmt.Errorf("ingest: %s: sample %d's name %q: %w", where, i+1, x.Name, err)
		}
		if x.Path == "" {
			return fmt.Errorf("ingest: %s: sample %s: no path", where, x.Name)
		}
		if len(x.Values) != len(columns) {
			return fmt.Errorf("ingest: %s: sample %s: %d values for %d columns", where, x.Name, len(x.Values), len(columns))
		}
		for _, v := range x.Values {
			if strings.ContainsAny(v, "\t\r\n") {
				return fmt.Errorf("ingest: %s: sample %s: value %q holds a tab or line break", where, x.Name, v)
			}
		}
	}
	names := make([]string, len(s))
	for i := range s {
		names[i] = s[i].Name
	}
	if a, b := firstRepeat(names); a >= 0 {
		return fmt.Errorf("ingest: %s: samples %d and %d are both named %q", where, a+1, b+1, names[a])
	}
	return nil
}

// checkSampleName refuses names that cannot end a barcode or head a
// column: empty, or holding a tab, line break or other control character.
func checkSampleName(n string) error {
	switch {
	case n == "":
		return errors.New("empty")
	case !utf8.ValidString(n):
		return errors.New("not UTF-8")
	case strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errors.New("holds a tab, line break or control character")
	}
	return nil
}

// sampleError is an error of one sample's input: it names the sample.
type sampleError struct {
	name, path string
	err        error
}

func (e *sampleError) Error() string {
	return fmt.Sprintf("ingest: sample %s (%s): %s", e.name, e.path, strings.TrimPrefix(e.err.Error(), "ingest: "))
}

func (e *sampleError) Unwrap() error { return e.err }

// multiSource reads several samples' sources as one: cells one sample
// after another, genes the matched genes (kept, in cols[:shared]) and then
// each sample's features of other types or genomes (never kept).
type multiSource struct {
	samples []Sample
	srcs    []source
	// cellStart[i] is sample i's first cell; cellStart[len] the cells.
	cellStart []int
	// geneMap[i] maps sample i's genes to columns; nil: the identity.
	geneMap [][]int32
	// has[i] marks the kept columns sample i holds; nil: all of them.
	has    [][]bool
	kept   []bool // the columns of the kept type that every sample must have
	join   GeneJoin
	shared int // the matched genes: columns [0, shared)
	// Per sample: features of other types or genomes, and the matched
	// genes it lacks under GenesIntersect.
	otherType, otherGenome []int
	notShared              int // matched genes dropped under GenesIntersect
	feat                   features
	bcs                    []string
	sums                   []string // each sample's SHA-256, once read

	mu sync.Mutex // guards the children's range openers

	hashOnce sync.Once
	hashed   chan struct{} // closed when sums (or hashErr) are in
	hashErr  error
}

// openSamples opens every sample's input with opt's settings and matches
// their genes; a failure names its sample and closes what was opened.
func openSamples(opt *Options) (ms *multiSource, err error) {
	m := &multiSource{samples: opt.Samples, join: opt.GeneJoin}
	defer func() {
		if err != nil {
			m.close()
		}
	}()
	ms = m
	ms.cellStart = make([]int, 1, len(opt.Samples)+1)
	for _, s := range opt.Samples {
		one := *opt
		one.Input, one.Samples = s.Path, nil
		src, err := openSource(&one)
		if err != nil {
			return nil, &sampleError{s.Name, s.Path, err}
		}
		ms.srcs = append(ms.srcs, src)
		cells, genes := src.shape()
		if cells == 0 || genes == 0 || src.entries() == 0 {
			return nil, &sampleError{s.Name, s.Path, fmt.Errorf("%s: empty matrix (%d cells × %d genes, %d stored entries)", src.describe().matrix, cells, genes, src.entries())}
		}
		ms.cellStart = append(ms.cellStart, ms.cellStart[len(ms.cellStart)-1]+cells)
	}
	if err := ms.matchGenes(opt); err != nil {
		return nil, err
	}
	n := ms.cellStart[len(ms.srcs)]
	ms.bcs = make([]string, 0, n)
	for i, src := range ms.srcs {
		bcs := src.barcodes()
		if bcs == nil {
			cells, _ := src.shape()
			bcs = numbered(cells)
		}
		for _, b := range bcs {
			ms.bcs = append(ms.bcs, b+"-"+ms.samples[i].Name)
		}
	}
	return ms, nil
}

// geneKey is a gene's id and which occurrence of that id it is in its
// input, so that an input that repeats an id matches occurrence by
// occurrence.
type geneKey struct {
	id string
	k  int
}

func keysOf(f features, kept []bool) []geneKey {
	seen := map[string]int{}
	var keys []geneKey
	for g, id := range f.IDs {
		if kept[g] {
			keys = append(keys, geneKey{id, seen[id]})
			seen[id]++
		}
	}
	return keys
}

// matchGenes builds the columns: the kept genes of every sample matched by
// id under opt.GeneJoin, then each sample's other features.
func (ms *multiSource) matchGenes(opt *Options) error {
	S := len(ms.srcs)
	keys := make([][]geneKey, S)
	kept := make([][]bool, S)
	ms.otherType, ms.otherGenome = make([]int, S), make([]int, S)
	for i, src := range ms.srcs {
		_, genes := src.shape()
		kept[i], ms.otherType[i], ms.otherGenome[i] = selectFeatures(src.features(), genes, opt.FeatureType, opt.Genome)
	}
	if ms.sameOrder(kept) {
		return nil
	}
	for i, src := range ms.srcs {
		keys[i] = keysOf(src.features(), kept[i])
	}
	if ms.join == GenesSame {
		if err := ms.sameGenes(keys); err != nil {
			return err
		}
	}
	// The matched genes in order of first appearance.
	col := map[geneKey]int32{}
	var order []geneKey
	count := []int{}
	for _, ks := range keys {
		for _, k := range ks {
			c, ok := col[k]
			if !ok {
				c = int32(len(order))
				col[k] = c
				order = append(order, k)
				count = append(count, 0)
			}
			count[c]++
		}
	}
	ms.shared = len(order)
	ms.kept = make([]bool, ms.shared)
	for c := range ms.kept {
		ms.kept[c] = ms.join != GenesIntersect || count[c] == S
		if !ms.kept[c] {
			ms.notShared++
		}
	}
	ms.feat = features{IDs: make([]string, ms.shared)}
	names, types, genomes := false, false, false
	for _, src := range ms.srcs {
		f := src.features()
		names, types, genomes = names || len(f.Names) > 0, types || len(f.Types) > 0, genomes || len(f.Genomes) > 0
	}
	if names {
		ms.feat.Names = make([]string, ms.shared)
	}
	if types {
		ms.feat.Types = make([]string, ms.shared)
	}
	if genomes {
		ms.feat.Genomes = make([]string, ms.shared)
	}
	filled := make([]bool, ms.shared)
	ms.geneMap = make([][]int32, S)
	ms.has = make([][]bool, S)
	next := ms.shared
	for i, src := range ms.srcs {
		f := src.features()
		_, genes := src.shape()
		gm := make([]int32, genes)
		has := make([]bool, ms.shared)
		ki := 0
		for g := range gm {
			if !kept[i][g] {
				gm[g] = int32(next)
				next++
				ms.appendOther(f, g)
				continue
			}
			c := col[keys[i][ki]]
			ki++
			gm[g], has[c] = c, true
			if !filled[c] {
				filled[c] = true
				ms.fill(int(c), f, g, opt.FeatureType)
			}
		}
		if !slices.Contains(has, false) {
			has = nil
		}
		ms.has[i] = has
		identity := next == ms.shared && genes == ms.shared
		for g := 0; identity && g < genes; g++ {
			identity = gm[g] == int32(g)
		}
		if !identity {
			ms.geneMap[i] = gm
		}
	}
	ms.kept = append(ms.kept, make([]bool, next-ms.shared)...)
	return nil
}

// sameOrder takes the common case at once: every sample holds the first's
// features in its order (ids, and which are kept). The columns are then
// the first sample's features, every sample read as it is stored.
func (ms *multiSource) sameOrder(kept [][]bool) bool {
	first := ms.srcs[0].features()
	for i, src := range ms.srcs[1:] {
		if !slices.Equal(src.features().IDs, first.IDs) || !slices.Equal(kept[i+1], kept[0]) {
			return false
		}
	}
	S := len(ms.srcs)
	ms.feat, ms.kept, ms.shared = first, kept[0], len(first.IDs)
	ms.geneMap, ms.has = make([][]int32, S), make([][]bool, S)
	// The other features are the first's columns, counted once.
	for i := 1; i < S; i++ {
		ms.otherType[i], ms.otherGenome[i] = 0, 0
	}
	return true
}

// fill copies sample gene g's annotations into matched column c; an
// annotation the sample does not record is its id (names), want or
// geneExpression (types), or empty (genomes).
func (ms *multiSource) fill(c int, f features, g int, want string) {
	ms.feat.IDs[c] = f.IDs[g]
	if ms.feat.Names != nil {
		ms.feat.Names[c] = at(f.Names, g, f.IDs[g])
	}
	if ms.feat.Types != nil {
		ms.feat.Types[c] = at(f.Types, g, cmpOr(want, geneExpression))
	}
	if ms.feat.Genomes != nil {
		ms.feat.Genomes[c] = at(f.Genomes, g, "")
	}
}

// at returns s[g], or def where s does not hold it.
func at(s []string, g int, def string) string {
	if g < len(s) {
		return s[g]
	}
	return def
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// appendOther appends a column for a feature of another type or genome.
func (ms *multiSource) appendOther(f features, g int) {
	ms.feat.IDs = append(ms.feat.IDs, f.IDs[g])
	if ms.feat.Names != nil {
		ms.feat.Names = append(ms.feat.Names, at(f.Names, g, f.IDs[g]))
	}
	if ms.feat.Types != nil {
		ms.feat.Types = append(ms.feat.Types, at(f.Types, g, geneExpression))
	}
	if ms.feat.Genomes != nil {
		ms.feat.Genomes = append(ms.feat.Genomes, at(f.Genomes, g, ""))
	}
}

// sameGenes refuses samples whose kept genes differ from the first's,
// naming both inputs and the first gene each holds that the other lacks.
func (ms *multiSource) sameGenes(keys [][]geneKey) error {
	first := map[geneKey]bool{}
	for _, k := range keys[0] {
		first[k] = true
	}
	for i := 1; i < len(keys); i++ {
		other := map[geneKey]bool{}
		for _, k := range keys[i] {
			other[k] = true
		}
		onlyA, onlyB := firstMissing(keys[0], other), firstMissing(keys[i], first)
		if onlyA == "" && onlyB == "" && len(keys[i]) == len(keys[0]) {
			continue
		}
		a, b := ms.samples[0], ms.samples[i]
		var diff []string
		if onlyA != "" {
			diff = append(diff, fmt.Sprintf("%s is in %s, not in %s", onlyA, a.Name, b.Name))
		}
		if onlyB != "" {
			diff = append(diff, fmt.Sprintf("%s is in %s, not in %s", onlyB, b.Name, a.Name))
		}
		return fmt.Errorf("ingest: the genes of samples %s (%s, %d genes) and %s (%s, %d genes) differ: first %s; give --genes intersect (the genes every sample holds) or --genes union (a gene a sample lacks is unobserved in its cells)",
			a.Name, a.Path, len(keys[0]), b.Name, b.Path, len(keys[i]), strings.Join(diff, "; "))
	}
	return nil
}

// firstMissing returns the first of keys not in set, as an id (with its
// occurrence where the id repeats), or "".
func firstMissing(keys []geneKey, set map[geneKey]bool) string {
	for _, k := range keys {
		if !set[k] {
			if k.k > 0 {
				return fmt.Sprintf("gene %s (occurrence %d)", k.id, k.k+1)
			}
			return "gene " + k.id
		}
	}
	return ""
}

// sampleOf returns the sample of cell.
func (ms *multiSource) sampleOf(cell int) int {
	return sort.SearchInts(ms.cellStart[1:], cell+1)
}

// remap turns sample i's batch into the columns and cells of the whole.
func (ms *multiSource) remap(i int, b *batch) {
	if off := int32(ms.cellStart[i]); off != 0 {
		if b.runs != nil {
			for k := range b.runs {
				b.runs[k].cell += off
			}
		} else {
			for k := range b.cell {
				b.cell[k] += off
			}
		}
	}
	if gm := ms.geneMap[i]; gm != nil {
		for k, g := range b.gene {
			b.gene[k] = gm[g]
		}
	}
}

func (ms *multiSource) shape() (cells, genes int) {
	return ms.cellStart[len(ms.srcs)], len(ms.kept)
}

func (ms *multiSource) entries() int64 {
	var n int64
	for _, s := range ms.srcs {
		e := s.entries()
		if e < 0 {
			return -1
		}
		n += e
	}
	return n
}

func (ms *multiSource) features() features { return ms.feat }
func (ms *multiSource) barcodes() []string { return ms.bcs }

func (ms *multiSource) describe() sourceInfo {
	info := ms.srcs[0].describe()
	out := sourceInfo{format: info.format, matrix: fmt.Sprintf("%d samples", len(ms.srcs)), layer: info.layer, genome: info.genome}
	for _, s := range ms.srcs[1:] {
		d := s.describe()
		if d.format != out.format {
			out.format = formatMixed
		}
		if d.layer != out.layer {
			out.layer = ""
		}
		if d.genome != out.genome {
			out.genome = ""
		}
	}
	return out
}

func (ms *multiSource) scan(ctx context.Context, fn func(*batch) error) error {
	for i, src := range ms.srcs {
		var own error // fn's error: not the input's
		err := src.scan(ctx, func(b *batch) error {
			ms.remap(i, b)
			own = fn(b)
			return own
		})
		if err != nil {
			if own == nil && ctx.Err() == nil {
				err = ms.wrap(i, err)
			}
			return err
		}
	}
	return nil
}

func (ms *multiSource) wrap(i int, err error) error {
	var se *sampleError
	if errors.As(err, &se) {
		return err
	}
	return &sampleError{ms.samples[i].Name, ms.samples[i].Path, err}
}

// ranges reads the samples' ranges one sample after another, where every
// sample is read in ranges; a reader opens a sample's reader when it first
// reads one of its ranges, and drops the previous sample's.
func (ms *multiSource) ranges() (int, func() (rangeReader, error)) {
	first := make([]int, len(ms.srcs)+1)
	opens := make([]func() (rangeReader, error), len(ms.srcs))
	for i, src := range ms.srcs {
		r, ok := src.(ranger)
		if !ok {
			return 0, nil
		}
		n, open := r.ranges()
		if n == 0 {
			return 0, nil
		}
		first[i+1], opens[i] = first[i]+n, open
	}
	return first[len(ms.srcs)], func() (rangeReader, error) {
		cur := -1
		var read rangeReader
		return func(r int, b *batch) error {
			i := sort.SearchInts(first[1:], r+1)
			if i != cur {
				if read != nil {
					read(releaseRanges, nil) // its chunk buffers, for the next sample's reader
				}
				ms.mu.Lock()
				rd, err := opens[i]()
				ms.mu.Unlock()
				if err != nil {
					return ms.wrap(i, err)
				}
				cur, read = i, rd
			}
			if err := read(r-first[i], b); err != nil {
				return ms.wrap(i, err)
			}
			ms.remap(i, b)
			return nil
		}, nil
	}
}

// startHash hashes the samples' inputs one after another in the
// background: one at a time, as one input is, not a goroutine and a
// buffer per sample competing with the write pass.
func (ms *multiSource) startHash() {
	ms.hashOnce.Do(func() {
		ms.hashed = make(chan struct{})
		go func() {
			defer close(ms.hashed)
			ms.sums = make([]string, len(ms.srcs))
			for i, s := range ms.srcs {
				s.startHash()
				sum, err := s.sha256()
				if err != nil {
					ms.hashErr = ms.wrap(i, err)
					return
				}
				ms.sums[i] = sum
			}
		}()
	})
}

// sha256 returns "": each sample's input has its own (ms.sums, for the
// manifest's samples).
func (ms *multiSource) sha256() (string, error) {
	ms.startHash()
	<-ms.hashed
	return "", ms.hashErr
}

func (ms *multiSource) bytes() int64 {
	var n int64
	for _, s := range ms.srcs {
		n += s.bytes()
	}
	return n
}

func (ms *multiSource) close() error {
	var errs []error
	for _, s := range ms.srcs {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

// String names the join as --genes takes it.
func (j GeneJoin) String() string {
	if j == GenesSame {
		return "same"
	}
	return string(j)
}

func sum(x []int) int {
	n := 0
	for _, v := range x {
		n += v
	}
	return n
}

// cellSamples returns each input cell's sample.
func (ms *multiSource) cellSamples() []uint16 {
	out := make([]uint16, ms.cellStart[len(ms.srcs)])
	for i := range ms.srcs {
		for n := ms.cellStart[i]; n < ms.cellStart[i+1]; n++ {
			out[n] = uint16(i)
		}
	}
	return out
}

// missing reports whether sample i lacks input column g.
func (ms *multiSource) missing(i, g int) bool {
	return ms.has[i] != nil && g < ms.shared && !ms.has[i][g]
}

// sampleMask is the observed mask of the output rows when some sample
// lacks a kept gene (GenesUnion): a row is observed except at the kept
// genes its sample lacks.
type sampleMask struct {
	start []int      // the output rows of sample i are [start[i], start[i+1])
	rows  [][]uint64 // per sample, the observed words of each of its rows
}

// row returns the observed words of output row r.
func (m *sampleMask) row(r int) []uint64 {
	return m.rows[sort.SearchInts(m.start[1:], r+1)]
}

// observedMask returns the mask of the output rows under plan, or nil
// when every sample holds every kept gene.
func (ms *multiSource) observedMask(p *filterPlan) *sampleMask {
	lacks := false
	for i := range ms.srcs {
		for _, g := range p.genes {
			lacks = lacks || ms.missing(i, g)
		}
	}
	if !lacks {
		return nil
	}
	words := (len(p.genes) + 63) / 64
	m := &sampleMask{start: make([]int, 1, len(ms.srcs)+1), rows: make([][]uint64, len(ms.srcs))}
	for i := range ms.srcs {
		row := make([]uint64, words)
		for o, g := range p.genes {
			if !ms.missing(i, g) {
				row[o>>6] |= 1 << (o & 63)
			}
		}
		m.rows[i] = row
		m.start = append(m.start, m.start[i]+ms.keptCells(i, p))
	}
	return m
}

// keptCells counts sample i's cells that the cell filter keeps.
func (ms *multiSource) keptCells(i int, p *filterPlan) int {
	n := 0
	for _, o := range p.cellMap[ms.cellStart[i]:ms.cellStart[i+1]] {
		if o >= 0 {
			n++
		}
	}
	return n
}

// report describes each sample for the manifest: its input, and what the
// filters, decided over every cell, did to its cells.
func (ms *multiSource) report(opt *Options, p *filterPlan, c *counts, ambient float64) []shard.Sample {
	out := make([]shard.Sample, len(ms.srcs))
	first := 0
	for i, src := range ms.srcs {
		info := src.describe()
		_, genes := src.shape()
		s := shard.Sample{
			Name: ms.samples[i].Name, Path: ms.samples[i].Path, Format: info.format.String(),
			Bytes: src.bytes(), Layer: info.layer, Values: ms.samples[i].Values,
			FirstCell: first, CellsBefore: ms.cellStart[i+1] - ms.cellStart[i], CellsAfter: ms.keptCells(i, p),
			GenesBefore: genes, Ambient: ambient,
		}
		if ms.sums != nil {
			s.SHA256 = ms.sums[i]
		}
		for _, g := range p.genes {
			if ms.missing(i, g) {
				s.GenesMissing++
			}
		}
		for _, k := range c.genesPerCell[ms.cellStart[i]:ms.cellStart[i+1]] {
			s.OnesBefore += int64(k)
		}
		first += s.CellsAfter
		out[i] = s
	}
	return out
}
