package gibbs

import (
	"context"
	"sync"
)

// seedStarts returns the seeded chains of the cfg.Starts starts (seedChain
// of each start's seed), seeding up to s.workers of them at once. Each
// seeding is sequential and reads only the data, so the chains do not
// depend on the number of workers; with InitCluster a start's clustering
// takes seconds on one core whatever the data's size, and the starts'
// clusterings side by side keep every core busy. A partitioned fit seeds
// one start at a time: its seedings sum rows across the processes, and
// every process must reach those reductions in the same order. No start
// is begun once ctx is done (in a partitioned fit: once any process's
// is, stopped's verdict); those under way finish, and the error is
// stopped's.
func (s *Sampler) seedStarts(ctx context.Context) ([]*chain, error) {
	chains := make([]*chain, s.cfg.Starts)
	at := max(1, s.workers)
	if s.part != nil {
		at = 1
	}
	sem := make(chan struct{}, at)
	var wg sync.WaitGroup
	var err error
	for c := range chains {
		sem <- struct{}{}
		if err = s.stopped(ctx); err != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			chains[c] = s.seedChain(chainSeed(s.cfg.Seed, c))
		})
	}
	wg.Wait()
	return chains, err
}
