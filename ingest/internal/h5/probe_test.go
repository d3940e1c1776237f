package h5

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scigolib/hdf5"
)

func TestProbe(t *testing.T) {
	files, _ := filepath.Glob("/work/shared/data/*/*.h5*")
	f2, _ := filepath.Glob("/work/shared/data/*/*/*.h5*")
	f3, _ := filepath.Glob("/work/shared/data/*/*/*/*.h5*")
	files = append(append(files, f2...), f3...)
	for _, fn := range files {
		f, err := hdf5.Open(fn)
		if err != nil {
			fmt.Println("OPENERR", fn, err)
			continue
		}
		fmt.Println("=====", fn, "sb", f.SuperblockVersion())
		f.Walk(func(p string, o hdf5.Object) {
			switch x := o.(type) {
			case *hdf5.Group:
				attrs, err := x.Attributes()
				s := ""
				for _, a := range attrs {
					v, err := a.ReadValue()
					s += fmt.Sprintf(" %s=%v(%v)", a.Name, v, err)
				}
				fmt.Println("G", p, err, s)
			case *hdf5.Dataset:
				info, err := x.Info()
				attrs, _ := x.Attributes()
				s := ""
				for _, a := range attrs {
					v, err := a.ReadValue()
					s += fmt.Sprintf(" %s=%.60v(%v)", a.Name, v, err)
				}
				fmt.Printf("D %s addr=%d %q %v %s\n", p, x.Address(), info, err, s)
				ss, err := x.ReadStrings()
				if err == nil {
					fmt.Printf("   strings %d %.80q\n", len(ss), ss)
				} else {
					fmt.Println("   strerr", err)
				}
			}
		})
		f.Close()
	}
}
