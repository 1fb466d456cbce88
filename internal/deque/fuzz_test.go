package deque_test

import (
	"bytes"
	"testing"

	"github.com/magpie-go/magpie/internal/deque"
)

// FuzzOwnerOps interprets each input byte as an operation on one deque and
// checks it against a slice model (index 0 is the top):
//
//	b%4 == 0 or 1: push 1+(b>>2)%64 fresh elements (long runs grow the ring)
//	b%4 == 2:      Pop, which must return the model's last element
//	b%4 == 3:      Poll if bit 2 is clear, else Steal; both return the first
//
// After every operation Len must equal the model's length and Cap must be a
// power of two at least 64 and at least Len. Plain `go test` runs the seeds;
// `go test -fuzz FuzzOwnerOps ./internal/deque` explores further.
func FuzzOwnerOps(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 2, 2, 3, 7})                                    // push, pop, pops and polls of empty
	f.Add([]byte{4, 2, 3, 7, 2})                                    // push 2, pop, poll, steal, pop
	f.Add([]byte{0xfc, 0xfc, 0xfc, 2, 3, 7, 2, 3})                  // 192 pushes: two growths
	f.Add(append(bytes.Repeat([]byte{0xfd}, 40), 3, 3, 2, 2, 7, 7)) // 2560 pushes
	f.Add([]byte{0xfc, 7, 7, 7, 0xfc, 0xfc, 2, 3, 2, 3})            // grow with top > 0
	f.Add(bytes.Repeat([]byte{1, 2, 0, 3}, 50))
	f.Fuzz(func(t *testing.T, ops []byte) {
		d := deque.New[int]()
		var model []*int
		next := 0
		for k, b := range ops {
			switch b % 4 {
			case 0, 1:
				for i := 0; i < 1+int(b>>2)%64; i++ {
					v := next
					next++
					d.Push(&v)
					model = append(model, &v)
				}
			case 2:
				got, _ := d.Pop()
				var want *int
				if len(model) > 0 {
					want = model[len(model)-1]
					model = model[:len(model)-1]
				}
				if got != want {
					t.Fatalf("op %d: Pop = %v, want %v", k, show(got), show(want))
				}
			case 3:
				var got *int
				name := "Poll"
				if b&4 == 0 {
					got = d.Poll()
				} else {
					name = "Steal"
					got = d.Steal()
				}
				var want *int
				if len(model) > 0 {
					want = model[0]
					model = model[1:]
				}
				if got != want {
					t.Fatalf("op %d: %s = %v, want %v", k, name, show(got), show(want))
				}
			}
			if d.Len() != len(model) {
				t.Fatalf("op %d: Len = %d, want %d", k, d.Len(), len(model))
			}
			if c := d.Cap(); c < 64 || c < d.Len() || c&(c-1) != 0 {
				t.Fatalf("op %d: Cap = %d with Len %d", k, c, d.Len())
			}
		}
	})
}

func show(x *int) any {
	if x == nil {
		return "nil"
	}
	return *x
}
