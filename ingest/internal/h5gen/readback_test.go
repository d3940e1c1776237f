package h5gen

import (
	"encoding/binary"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/scigolib/hdf5"
)

// h5file is everything scigolib's reader finds in a file: datasets by
// path, read as numbers or strings, their layout description, and the
// attributes of groups and datasets.
type h5file struct {
	nums    map[string][]float64
	strs    map[string][]string
	info    map[string]string
	attrs   map[string]map[string]any // object path → name → value
	groups  map[string]bool
	addrs   map[string]uint64
	version uint8
}

// readBack opens path with scigolib and reads every object, failing the
// test on any read error.
func readBack(t *testing.T, path string) *h5file {
	t.Helper()
	f, err := hdf5.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	r := &h5file{
		nums: map[string][]float64{}, strs: map[string][]string{}, info: map[string]string{},
		attrs: map[string]map[string]any{}, groups: map[string]bool{}, addrs: map[string]uint64{},
		version: f.SuperblockVersion(),
	}
	var errs []string
	// The attribute type lives in scigolib's internal package, so it is
	// reached through reflection: a slice of pointers to structs with a
	// Name field and a ReadValue method.
	collect := func(p string, as any) {
		v := reflect.ValueOf(as)
		for i := range v.Len() {
			a := v.Index(i)
			name := a.Elem().FieldByName("Name").String()
			out := a.MethodByName("ReadValue").Call(nil)
			if err, _ := out[1].Interface().(error); err != nil {
				errs = append(errs, fmt.Sprintf("%s@%s: %v", p, name, err))
				continue
			}
			if r.attrs[p] == nil {
				r.attrs[p] = map[string]any{}
			}
			r.attrs[p][name] = out[0].Interface()
		}
	}
	f.Walk(func(p string, o hdf5.Object) {
		switch o := o.(type) {
		case *hdf5.Group:
			p = strings.TrimSuffix(p, "/")
			r.groups[p] = true
			as, err := o.Attributes()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s attributes: %v", p, err))
			}
			collect(p, as)
		case *hdf5.Dataset:
			r.addrs[p] = o.Address()
			info, err := o.Info()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s info: %v", p, err))
			}
			r.info[p] = info
			switch {
			case strings.Contains(info, "class_9"):
				bs, err := o.ReadVLenBytes()
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: %v", p, err))
				}
				for _, b := range bs {
					r.strs[p] = append(r.strs[p], string(b))
				}
			case strings.Contains(info, "string"):
				s, err := o.ReadStrings()
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: %v", p, err))
				}
				r.strs[p] = s
			default:
				v, err := o.Read()
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: %v", p, err))
				}
				r.nums[p] = v
			}
			as, err := o.Attributes()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s attributes: %v", p, err))
			}
			collect(p, as)
		}
	})
	if len(errs) > 0 {
		t.Fatalf("reading %s:\n%s", path, strings.Join(errs, "\n"))
	}
	return r
}

// filterIDs returns the filter ids of the dataset's pipeline message, in
// order, parsing the message independently of the writer's fix.
func filterIDs(t *testing.T, path string, addr uint64) []uint16 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := readOHDR(f, addr)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := h.message(msgPipeline)
	if err != nil {
		return nil
	}
	if pl[0] != 2 {
		t.Fatalf("pipeline version %d, want 2", pl[0])
	}
	var ids []uint16
	pos := 2
	for range int(pl[1]) {
		ids = append(ids, binary.LittleEndian.Uint16(pl[pos:]))
		ncd := int(binary.LittleEndian.Uint16(pl[pos+4:]))
		pos += 6 + 4*ncd
	}
	return ids
}
