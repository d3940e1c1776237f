package gibbs

import "testing"

// TestLevelsDigestsPinned pins fixed small runs of scpipe fit's single-cell
// model (Dropout noise, 8 cell and 8 gene levels, a housekeeping code),
// whose steps scan with lift planes, recorded before the rows' scans left
// the levels of their ones out when the decisions did not need them
// (decideBounded): any change of a decision changes a digest. Unmasked
// runs take Σ popcount(S) from a stepTotals, masked ones do not; each runs
// with every kernel. Unlike TestSweepDigestsPinned's, these digests are the
// default build's (GOAMD64=v1): with GOAMD64=v3 the levels' updates fuse
// into FMAs and give other digests, the same before and after that change.
func TestLevelsDigestsPinned(t *testing.T) {
	t.Parallel()
	// L counts the housekeeping code, which Config.L does not.
	cases := []pinCase{
		{700, 300, 3, 0, 1, false, InitData, "bc07424aa1623ba7f457808dbd32ce50c5df5a0292b7ba41cb689da65a9c9f02"},
		{900, 500, 6, 128, 2, true, InitData, "1f3b95c7543a9b31d8d372b5d6ec7a0aec1a9293e95774bd9e2a2d60da8227f8"},
		{1100, 600, 11, 192, 3, false, InitRandom, "00b989d7aedab95fa00358a1b3ab22bf220fec45356a6e8343c4e909b9a0480a"},
		{800, 400, 7, 64, 2, true, InitCluster, "294d043f99fe02879b93d29edff2d300287a59b1e1c6d30ca53a9568807405ee"},
	}
	for _, tc := range cases {
		tc.run(t, pinData{programs: tc.L - 1, noise: 0.05, observed: 0.9}, func(cfg *Config) {
			cfg.L, cfg.Seed = tc.L-1, 7
			cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Housekeeping = Dropout, 8, 8, true
		})
	}
}

// TestHousekeepingDigestsPinned pins runs of the Dropout likelihood with a
// housekeeping code and no cell levels, whose U steps fold the
// housekeeping code into every row's counts rather than scan its cells
// (foldHousekeeping), with and without gene levels; recorded before that
// change.
func TestHousekeepingDigestsPinned(t *testing.T) {
	t.Parallel()
	// L counts the housekeeping code, which Config.L does not.
	for _, geneLevels := range []int{1, 8} {
		cases := map[int][]pinCase{
			1: {
				{700, 300, 3, 0, 1, false, InitData, "680ef39c4862d5fc65b5a7053022cf64fb8c69342d670f661b371d9c2924c82f"},
				{900, 500, 6, 128, 2, true, InitCluster, "ead2ecb31cfb0bbb80fade059e09d020a84ac2b3e7c5505ca193e4d23af4b665"},
			},
			8: {
				{800, 400, 5, 64, 3, true, InitRandom, "a1df4214678f237896d968cb24fd439cbe49bdb34b267ed85f174a2fe819efa8"},
			},
		}[geneLevels]
		for _, tc := range cases {
			tc.run(t, pinData{programs: tc.L - 1, noise: 0.05, observed: 0.9}, func(cfg *Config) {
				cfg.L, cfg.Seed = tc.L-1, 11
				cfg.Noise, cfg.CellLevels, cfg.GeneLevels, cfg.Housekeeping = Dropout, 1, geneLevels, true
			})
		}
	}
}
