//go:build unix

package h5

import (
	"flag"
	"sync"
	"syscall"
)

var limitOnce sync.Once

// limitMemory caps the address space of a fuzzing worker process at 4 GiB
// (of a machine's tens): an allocation the reader's bounds missed then
// fails at once, and the fuzzer records the input as a crash, instead of
// the allocation taking memory that other processes of a shared machine
// need. Outside fuzzing (a plain go test, perhaps with -race, whose shadow
// memory needs far more address space) it does nothing.
func limitMemory() {
	limitOnce.Do(func() {
		if w := flag.Lookup("test.fuzzworker"); w == nil || w.Value.String() != "true" {
			return
		}
		var lim syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) != nil {
			return
		}
		lim.Cur = min(lim.Max, 4<<30)
		syscall.Setrlimit(syscall.RLIMIT_AS, &lim)
	})
}
