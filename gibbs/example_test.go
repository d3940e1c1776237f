package gibbs_test

import (
	"context"
	"fmt"

	"scpipe/gibbs"
)

// A 2-code pattern: cells 0–49 use code 0 (genes 0–29), cells 30–79 use
// code 1 (genes 20–59). The sampler recovers it from the data alone.
func Example() {
	x := gibbs.NewMatrix(80, 60)
	for n := range 80 {
		for d := range 60 {
			if n < 50 && d < 30 || n >= 30 && d >= 20 {
				x.Set(n, d, true)
			}
		}
	}
	data, err := gibbs.NewData(x, nil, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := gibbs.DefaultConfig()
	cfg.L, cfg.BurnIn, cfg.Samples = 2, 30, 30
	s, err := gibbs.NewSampler(context.Background(), data, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Run(context.Background(), nil); err != nil {
		fmt.Println(err)
		return
	}
	res, err := s.Result()
	if err != nil {
		fmt.Println(err)
		return
	}
	wrong := 0
	for n := range 80 {
		for d := range 60 {
			if res.Reconstruct(n, d) != x.Get(n, d) {
				wrong++
			}
		}
	}
	fmt.Println("wrongly reconstructed entries:", wrong)
	p, _ := res.Predict(40, 25, gibbs.PlugIn)
	fmt.Printf("P(x = 1) at a shared gene: %.2f\n", p)
	// Output:
	// wrongly reconstructed entries: 0
	// P(x = 1) at a shared gene: 1.00
}
