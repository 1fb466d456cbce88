package forkjoin

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/magpie-go/magpie/internal/testenv"
)

// TestPointerShapedMatchesBoxing: pointerShaped says true exactly for the
// types whose conversion to spawnAction allocates nothing, the ones
// ExecuteTaskPriority puts into a submission slot unboxed (exectask.go),
// checked against testing.AllocsPerRun for a table of shapes.
func TestPointerShapedMatchesBoxing(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector allocates")
	}
	x := 7
	rows := []shapeRow{
		rowOf("pointer", &shapePtr{&x}),
		rowOf("struct of a pointer", shapePtr{&x}),
		rowOf("struct of a struct of a pointer", shapeNested{shapePtr{&x}}),
		rowOf("array of one pointer", shapeArray{&x}),
		rowOf("func", funcAction(func(*Worker) { x++ })),
		rowOf("map", shapeMap{1: 1}),
		rowOf("chan", make(shapeChan)),
		rowOf("struct of an unsafe.Pointer", shapeUnsafe{unsafe.Pointer(&x)}),
		rowOf("int", shapeInt(x+1000)),
		rowOf("two pointers", shapeTwo{&x, &x}),
		rowOf("pointer and padding", shapePad{p: &x}),
		rowOf("array of two pointers", shapeArray2{&x, &x}),
	}
	for _, r := range rows {
		allocs := testing.AllocsPerRun(100, r.convert)
		assert.Equal(t, allocs == 0, r.shaped, "%s: %v allocations per conversion", r.name, allocs)
	}
}

// shapeRow is a row of TestPointerShapedMatchesBoxing: what pointerShaped
// says of a type, and a conversion of a value of it to spawnAction.
type shapeRow struct {
	name    string
	shaped  bool
	convert func()
}

// shapeSink keeps the converted values escaping, so that the compiler
// cannot put a boxed one on the stack.
var shapeSink spawnAction

func rowOf[A spawnAction](name string, v A) shapeRow {
	return shapeRow{name, pointerShaped(reflect.TypeFor[A]()), func() { shapeSink = v }}
}

type (
	shapePtr    struct{ p *int }
	shapeNested struct{ s shapePtr }
	shapeArray  [1]*int
	shapeArray2 [2]*int
	shapeMap    map[int]int
	shapeChan   chan int
	shapeUnsafe struct{ p unsafe.Pointer }
	shapeInt    int
	shapeTwo    struct{ a, b *int }
	shapePad    struct {
		p *int
		_ struct{}
	}
)

func (shapePtr) Compute(*Worker)    {}
func (shapeNested) Compute(*Worker) {}
func (shapeArray) Compute(*Worker)  {}
func (shapeArray2) Compute(*Worker) {}
func (shapeMap) Compute(*Worker)    {}
func (shapeChan) Compute(*Worker)   {}
func (shapeUnsafe) Compute(*Worker) {}
func (shapeInt) Compute(*Worker)    {}
func (shapeTwo) Compute(*Worker)    {}
func (shapePad) Compute(*Worker)    {}
