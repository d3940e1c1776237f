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
		{700, 300, 3, 0, 1, false, InitData, "891f5ed18aebcb452691935a79649e0a18508b2b7f9fa7792c9daa61f9d1562f"},
		{900, 500, 6, 128, 2, true, InitData, "c37832ac563fecc12bd92d21f23ad232329f5c8b87ea86c25d7e00fc68f015a9"},
		{1100, 600, 11, 192, 3, false, InitRandom, "97457f82ebb0532bf29576813147523583d2782f8ae7ffd1195753a7bf0cb056"},
		{800, 400, 7, 64, 2, true, InitCluster, "8c3c167f5c7781ddfa70093442b1d71b04a88618c01fedfc3d9065be63151b5d"},
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
