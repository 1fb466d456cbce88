module github.com/magpie-go/magpie/bench

go 1.26.0

replace github.com/magpie-go/magpie => ../

require (
	github.com/magpie-go/magpie v0.0.0-00010101000000-000000000000
	github.com/sourcegraph/conc v0.3.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.25.0
)

require (
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
