package magpie_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/magpie-go/magpie"
)

func ExampleForErr() {
	lines := []string{"12", "7", "x", "40"}
	sum := make([]int, len(lines))
	err := magpie.ForErr(nil, len(lines), func(i int) error {
		n, err := strconv.Atoi(lines[i])
		if err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
		sum[i] = n
		return nil
	})
	fmt.Println(err)
	// Output: line 3: strconv.Atoi: parsing "x": invalid syntax
}

func ExampleForContext() {
	errNotFound := errors.New("not found")
	ids := []int{3, 5, 8, 13}
	// The context a call receives is canceled once another call fails:
	// a long call (a query, a download) can give up early.
	err := magpie.ForContext(context.Background(), nil, len(ids), func(ctx context.Context, i int) error {
		if ids[i] == 8 {
			return fmt.Errorf("id %d: %w", ids[i], errNotFound)
		}
		return ctx.Err()
	})
	fmt.Println(errors.Is(err, errNotFound))
	// Output: true
}

func ExampleMapErr() {
	squares, err := magpie.MapErr(nil, []string{"1", "2", "3"}, func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		return n * n, err
	})
	fmt.Println(squares, err)
	// Output: [1 4 9] <nil>
}

func ExampleMapContext() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := magpie.MapContext(ctx, nil, []int{1, 2}, func(ctx context.Context, x int) (int, error) {
		return x, nil
	})
	fmt.Println(out, err)
	// Output: [] context canceled
}

func ExampleIndexFunc() {
	xs := []int{4, 8, 15, 16, 23, 42}
	fmt.Println(magpie.IndexFunc(nil, xs, func(x int) bool { return x%2 == 1 }))
	fmt.Println(magpie.IndexFunc(nil, xs, func(x int) bool { return x > 100 }))
	// Output:
	// 2
	// -1
}

func ExampleContainsFunc() {
	words := []string{"fork", "join", "steal"}
	fmt.Println(magpie.ContainsFunc(nil, words, func(w string) bool { return len(w) == 5 }))
	// Output: true
}

func ExampleAny() {
	xs := []float64{1, 2, -3}
	fmt.Println(magpie.Any(nil, xs, func(x float64) bool { return x < 0 }))
	// Output: true
}

func ExampleAll() {
	xs := []float64{1, 2, -3}
	fmt.Println(magpie.All(nil, xs, func(x float64) bool { return x > 0 }))
	// Output: false
}
