package gibbs

import "sync"

// seedStarts returns the seeded chains of the cfg.Starts starts (seedChain
// of each start's seed), seeding up to s.workers of them at once. Each
// seeding is sequential and reads only the data, so the chains do not
// depend on the number of workers; with InitCluster a start's clustering
// takes seconds on one core whatever the data's size, and the starts'
// clusterings side by side keep every core busy.
func (s *Sampler) seedStarts() []*chain {
	chains := make([]*chain, s.cfg.Starts)
	sem := make(chan struct{}, max(1, s.workers))
	var wg sync.WaitGroup
	for c := range chains {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			chains[c] = s.seedChain(chainSeed(s.cfg.Seed, c))
		})
	}
	wg.Wait()
	return chains
}
