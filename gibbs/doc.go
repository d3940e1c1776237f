// Package gibbs implements the OrMachine (Rukat et al., "Bayesian Boolean
// Matrix Factorisation", sections 3.1–3.3 and 3.5): a Metropolised Gibbs
// sampler for binary data X (N cells × D genes) explained as a noisy Boolean
// product of Z (N × L: which codes a cell uses) and U (D × L: which genes a
// code switches on), with independent Bernoulli priors on every z_nl and
// u_ld and x̃ = 0 for unobserved entries. Two likelihoods of an observed
// entry given c_nd = OR_l z_nl u_ld (whether the product covers it):
//
// Symmetric, the paper's: p(x_nd | c) = σ(λ · x̃_nd · (2c − 1)), x̃ ∈ {−1, +1}.
//
// Dropout, for single-cell data: P(x_nd = 1 | c = 1) = 1 − α and
// P(x_nd = 1 | c = 0) = β, a rate for dropouts and one for background.
// With Config.CellLevels = K > 1 each cell n has a level k_n < K and
//
//	P(x = 0 | c = 1) = ρ · P(x = 0 | c = 0),   log P(x = 1 | c = 1)/P(x = 1 | c = 0) = g(k_n) = lift0 + step·k_n,
//
// so that a cell's background is β(k) = (1 − ρ)/(e^g(k) − ρ): a cell that
// detects more genes sits at a level of higher background (smaller g).
// With Config.GeneLevels = G > 1 as well, each gene d has a level
// k_d < G and the gain is g(n, d) = lift0 + step·k_n + gene0 +
// geneStep·k_d, β_nd = (1 − ρ)/(e^g(n, d) − ρ): a gene detected in many
// cells whatever their type (a high baseline) sits at a level of higher
// background, where covering it gains less (genelevels.go). With
// Config.CellSamples (cells in technical samples, each a contiguous run)
// the gene's level is the sample's, k_{d,s(n)}: each sample's ambient
// profile is its own background, not a code (cellsamples.go).
//
// # Conditionals
//
// Let S be the observed entries that variable v (z_nl in a Z step, u_ld
// in a U step) alone decides: the entries of its row (cell n, or gene d)
// in its code l's bitset over the other factor (U_l, or Z_l) that no other
// active code of the row covers. Turning v on covers exactly S, so the
// logit of its full conditional is
//
//	c = Σ_{e ∈ S} [log p(x_e | c_e = 1) − log p(x_e | c_e = 0)] + logit(p_l),
//
// a sum of gains over S: with o ones and z zeros in S,
//
//	Symmetric:               λ·(o − z) = λ·(2o − |S|)      (the paper's eq. update_z)
//	Dropout:                 o·log((1−α)/β) + z·log(α/(1−β))
//	Dropout, per-cell levels: Σ_{ones e} g(k_{cell(e)}) + z·log ρ
//	 and per-gene levels:    Σ_{ones e} g(k_{cell(e)}, k_{gene(e)}) + z·log ρ
//
// In a Z step (a cell's row) g is constant along the row; in a U step (a
// gene's row) the ones' sum is lift0·o + step·Σ_j 2^j·o_j, o_j the ones in
// cells with bit j of their level set. With per-gene levels the Z step's
// sum is (lift0 + step·k_n + gene0)·o + geneStep·Σ_j 2^j·o_j, o_j now the
// ones in genes with bit j of their level set (the same kernel, over the
// genes' bit planes), and the U step's adds (gene0 + geneStep·k_d)·o.
// Every term is a count, so the kernels count o, |S| and the o_j and the
// conditional is put together in floating point in one fixed order:
// results do not depend on how rows are split among workers or columns
// among segments. The tests compare the chains with the enumerated
// posterior of 3 × 3 problems under each likelihood (exact_test.go,
// depth_test.go, genelevels_test.go).
//
// The parameters (λ; α and β; ρ, the levels' grid and each cell's level)
// are set to their maximum-likelihood values after every sweep from
// integer counts of the sweep's final state: the observed entries, the
// ones, the covered entries and the mispredicted ones, which the kernel
// counts as it scans (per cell, with levels). With levels a sweep updates
// U before Z, so that the Z step's per-cell counts are those of the final
// state: each cell's background given ρ is a root of a quadratic, the
// grid spans the 2nd to 98th percentile of the cells' gains, each cell
// takes the nearest level, and ρ maximises the likelihood given the levels
// (golden-section search); two rounds. Per-gene levels follow, from half
// the burn-in on, each gene's from its uncovered entries (genelevels.go
// says how, and why it is not the joint maximum). A chain seeded with
// codes and no usage first takes one Z step, so that its first U step sees
// cells using them.
//
// A housekeeping code (Config.Housekeeping) is a code beside the L, the
// sampler's last, with z clamped to 1 in every cell: the Z step never
// proposes it, and it takes the genes detected everywhere at the covered
// rate. Where a U row is scanned without levels, the housekeeping code's
// cells, which are every cell, are not scanned: its sum follows from the
// counts of the gene's other codes (foldHousekeeping). Rows scanned with
// levels, and every row of a partitioned fit with cell levels, still scan
// them.
//
// Fixed codes (Config.FixedCodes) are the same for U: columns held at
// given genes, which the U step never proposes, so the sampler draws from
// p(Z, U_free | X, U_fixed): known programs whose usage is inferred, beside
// free codes that take what they leave. Every chain starts with them (the
// cluster and data starts seed only the free codes, the data start from
// genes they leave uncovered), and a restored state must hold them.
//
// # Per-cell levels
//
// The Dropout likelihood with per-cell levels (Config.CellLevelBits > 0)
// gives each cell n a level k_n of background: with ρ shared by all cells,
//
//	P(x_nd = 0 | covered) = ρ · P(x_nd = 0 | not covered)
//	log P(x_nd = 1 | covered) / P(x_nd = 1 | not covered) = g(k_n) = lift0 + step·k_n
//
// so that the background of level k is β_k = (1 − ρ)/(e^g(k) − ρ): a cell
// that detects more genes (deeper sequencing) sits at a lower level, with a
// higher background and a smaller gain per detected gene. Covering an
// observed zero changes the log-likelihood by log ρ in every cell, so a
// step's zeros need only counts, as before; an observed one changes it by
// g(k_n), which is constant along a Z step's row (a cell) and, along a U
// step's row (a gene), the sum lift0·ones + step·Σ_j 2^j·ones_j, where
// ones_j counts the ones in cells with bit j of their level set: the
// kernel counts them over the level's bit planes (condSumsLift).
//
// Without per-cell levels a deep cell's extra detections are explained by a
// code that only deep cells use; measured on pbmc3k-600 such a code took a
// few dozen cells and a thousand genes, and made the chains disagree.
//
// # Per-gene levels
//
// Per-gene levels (Config.GeneLevelBits > 0, on top of per-cell levels)
// give each gene d a level k_d, and the gain of a covered one becomes
//
//	g(n, d) = lift0 + step·k_n + gene0 + geneStep·k_d
//
// with zeros still at log ρ: a gene detected in many cells whatever codes
// they use (ribosomal, or a high baseline) sits at a low level, where
// covering its ones gains little and covering its zeros costs as before,
// so that a code is no longer the cheapest explanation of it. In the Z step
// (a cell's row over genes) the genes' levels vary along the row: the
// kernel counts Σ_j 2^j·popcount(x ∧ S ∧ G_j) over the genes' bit planes
// G_j, as the U step counts over the cells' (condSumsLift). In the U step
// (a gene's row) gene0 + geneStep·k_d is a constant of the row, added to
// lift0.
//
// The genes' levels are set after every sweep from the U step's per-gene
// counts (after the cells' levels and ρ), from sweep schedule.genesFrom on and
// before Config.HoldFrom; until then every gene's offset is 0, the
// per-cell model's gain.
// A gene's background is the frequency of ones among its uncovered
// entries, shrunk towards the pooled frequency by geneShrink·N entries; its
// deviation is its gain, log(1 − ρ(1 − β)) − log β, less the pooled
// background's; the grid spans the 2nd to the 98th percentile of the
// deviations and each gene takes the nearest level. The offsets are then
// shifted so that the uncovered entries expect as many ones as they hold
// (calibrate): the cells' gains, fitted with every gene at offset 0, keep
// their meaning. gene0 is raised where needed so that every g(n, d) stays
// at least minLift (a background below 1).
//
// This is not the joint maximum of the likelihood in the genes' levels:
// that needs each gene's counts by cell level, and the cells' by gene
// level, which the kernels do not count. The uncovered frequency is what
// the ρ-coupled estimate of a cell's background (cellBackground) is not
// for a gene: a gene covered in most cells, such as a high-baseline gene
// that a code most cells use has taken, looks under the coupled estimate
// like a gene of no background (its ones are explained by the cover),
// which keeps it in the code; its uncovered cells still show its
// baseline. The delay lets the codes form first: a program's gene not yet
// in its code shows the program's cells among its uncovered ones, and a
// high background set then would keep it out. The U step's counts are
// those of the state between the U and the Z step, half a sweep behind the
// cells'. Everything runs in gene order, so the levels are the same for
// any number of workers; in a partitioned fit the counts are summed
// across processes first, and every process sets the same levels.
//
// # Target
//
// With Config.HoldFrom = H > 0 (Dropout noise) the parameters θ — the
// rates, ρ, the levels' grids (lift0, step, gene0, geneStep), every cell's
// level k_n and every gene's level k_d (one a sample with
// Config.CellSamples) — are set from the state after each of sweeps
// 0 … H−1, an empirical-Bayes burn-in, and held at those values θ̂ from
// then on. Every later sweep is then an exact MCMC step of
//
//	p(Z, U | X, θ̂) ∝ ∏_{(n,d) observed} p(x_nd | c_nd, θ̂) · ∏_{n,l} p_l^z_nl (1 − p_l)^(1−z_nl) · ∏_{d,l} q_l^u_ld (1 − q_l)^(1−u_ld),
//
// c_nd = OR_l z_nl u_ld, with
//
//	p(x = 1 | c = 0) = β_nd = (1 − ρ)/(e^g(n,d) − ρ),  p(x = 0 | c = 1) = ρ·(1 − β_nd),  g(n, d) = lift0 + step·k_n + gene0 + geneStep·k_d,
//
// p_l and q_l the priors of Z and U. The flips, the swap moves and the
// split–merge moves each leave it invariant (TestHeldMatchesEnumeration,
// TestSwapsMatchEnumeration, TestSplitMergeMatchesEnumeration,
// TestSampleHeldMatchesEnumeration compare chains with it enumerated), and
// every retained state is drawn from it. Without a hold the parameters
// follow the state after every sweep, and the chain has no fixed target.
// θ̂ is the chain's own: chains of other seeds hold other estimates and
// sample other posteriors. Config.Params gives a chain the θ̂ another one
// held (Sampler.HeldParams), held from its first sweep, so that chains
// from different starts share one target (TestGivenParamsMatchEnumeration).
//
// # Exact log-likelihood
//
// With per-gene levels the gain of a covered one, g(n, d), varies along a
// cell's row as well as along a gene's, so the log-likelihood of a state
// is not a function of the steps' per-row counts: it needs the observed
// entries by (cell level, gene level), coverage and value. entryTotals
// counts them in a pass of its own, a Boolean product of the row's codes
// and 32 popcounts a word, which costs more than a sweep of the vector
// kernels. Once the parameters are held it runs once, and the
// log-likelihood follows the flips: it splits into a part that depends on
// the parameters alone and a sum over the covered entries,
//
//	log p(X_obs | Z, U, θ) = Σ_ones log β_nd + Σ_zeros log(1 − β_nd)
//	                        + Σ_covered ones g(n, d) + (covered zeros)·log ρ,
//
// since covering an observed one adds g = log(1 − ρ(1 − β)) − log β and
// covering a zero log ρ. The first line is the state's with nothing
// covered, computed once (heldBase); g is linear in the gene's level, so
// the second line needs the Z step's covered ones and zeros by cell level
// and, over every covered one, the sum of its gene's level, which the
// steps' accepted flips and swaps change by amounts their scans count
// (stepSpec.trackLev, heldLogLik). Every held sweep thus reports the exact
// log-likelihood of the target above, which R̂ and the choice between
// chains read. While the levels still move a sweep reports the per-cell
// levels' (depth.go), every gene at offset 0: before the genes' levels are
// first set that is exact, and after it those sweeps belong to the
// estimation, not to the posterior.
//
// # Settling
//
// A burn-in of fixed length is blind: on real cells a chain of many codes
// is still climbing, under parameters held since HoldFrom, long after a
// chain of few codes has reached its level, and the sampling sweeps of a
// climbing chain average a drift, not a posterior. With Config.MaxBurnIn
// the sampling sweeps are judged once they are drawn: a window of Samples
// sweeps is kept when its log-likelihood shows no trend (the absolute
// Spearman correlation with the sweep below SettleRho) and its two halves
// sit at one level (the within-chain rank-normalised split-R̂ below
// SettleRHat, the statistic the run's summary reports). Otherwise the
// window becomes burn-in, its states leave the posterior counts, and
// Samples more sweeps are drawn, as long as the burn-in stays within
// MaxBurnIn. So the retained states are the first window that has
// settled, and a fit that reached the cap says so by its R̂. On real
// cells a chain climbs in steps: a window of 30 sweeps, or a test at
// every sweep, passes a slow climb by chance, and the chain then climbs
// through its samples. The decision reads the trace alone, whose
// log-likelihoods are sums of integer counts, so it is the same for any
// number of workers or processes, and a restored sampler replays it from
// its trace.
//
// # Sampler
//
// A sweep updates every row of Z in parallel (each cell's L codes in turn),
// then every row of U, then sets λ to its maximum-likelihood value. Rows of Z
// are conditionally independent given U (and rows of U given Z), so the
// blocked parallel schedule is the same Markov chain as a sequential scan.
// Each variable's flip is proposed and accepted with probability
// min(1, e^±c), where c = λ·Σ_d x̃_nd u_ld ∏_{l'≠l}(1 − z_nl' u_l'd) + logit(p_l)
// is the logit of its full conditional (eq. update_z), evaluated with
// Algorithm 1's shortcut: only genes where u_ld = 1 and no other active code
// already covers d contribute. With Config.FixLambda the chain is an exact
// MCMC sampler of p(Z, U | X, λ) (or of the Dropout likelihood's fixed
// rates); the tests compare it with the enumerated posterior of tiny
// problems.
//
// A sweep (sweepChain, or sweepLevels with per-cell levels, which runs the
// U step first) is a Z step and a U step (stepSpec) followed by the update
// of the likelihood's parameters. A step updates its rows in parallel over
// blocks of 64 (runStep, rowsRange), 16 rows at a time (updateRows): a scan
// sums the conditionals of the rows' pending codes (scan, with the Go or
// the vector kernel), then the codes are decided in turn (decide,
// conditional, accept) until a flip changes a row's coverage. With level
// planes a row is scanned without its ones' levels until a decision needs
// them (decideBounded).
//
// With Config.Swaps, each Z step first lets a quarter of the cells (drawn
// by their keys) propose to move from one of their codes l to one they do
// not use, m, in one step: a Metropolis–Hastings move with a symmetric
// proposal, accepted with probability min(1, e^Δ), Δ the difference of
// the two codes' flip conditionals given the cell's other codes (swap.go).
// Single flips make that move only through a state that uses both codes or
// neither, which with programs of hundreds of genes costs hundreds of nats.
// With Config.GeneSwaps each U step does the same for a quarter of the
// genes, the housekeeping code among the codes a gene moves from or to.
// A gene that the housekeeping code holds needs it: its other codes then
// decide no entry and their flips' conditionals are their priors. Under
// the uniform prior on U that is logit 0, and a Metropolised flip of
// logit 0 is always accepted, so they turn on and off together, sweep
// after sweep. The housekeeping code, decided after them,
// sees them all on (and then decides only the cells that use no code) or
// all off, never one program alone holding the gene. With a sample
// model's gene levels a gene's swap weighs its ones by sample, as its
// flips do.
//
// With Config.SplitMerge, each burn-in sweep of a chain starts with that
// many split–merge proposals (splitmerge.go), Jain and Neal's restricted Gibbs
// split–merge written for Boolean codes: an ordered pair (l, m) of codes is
// drawn; with m unused, l's cells S are split between l and m; with both
// used, they are merged into l, or their cells S divided afresh between
// them, with the genes of both drawn anew. The proposal is a restricted
// Gibbs scan from a launch state that depends on S and the data alone,
// and the move is accepted with the Metropolis–Hastings ratio of the
// target above, so that it too leaves the posterior invariant. The
// sampling sweeps make none: a merge and a split can carry a program to
// another code, and each code's states are averaged. An unused code's
// genes follow their prior, so a split pays for the code it brings into
// use: under a uniform prior on U that is D·log 2 nats less the entropy
// its genes keep, the prior's own price of each code used. Single flips
// rarely meet it: they empty a code, or fill an empty one, a cell at a
// time, through states that each cost hundreds of nats.
//
// λ is updated as σ(λ) = P / (observed entries), P the observed entries the
// current Boolean product predicts correctly, clamped to
// [1/2, 1 − 1/(2·observed)]: λ stays finite when every entry is explained, and
// is 0 (the data carry no signal under the model, which requires λ ≥ 0) when
// at most half are. Dropout's rates are their frequencies among the covered
// and the uncovered entries, half an entry from 0 and 1; when covering does
// not raise the chance of a one, both become the data's density.
//
// # Multi-layer OrMachine
//
// LayersSampler fits the paper's multi-layer model (section 3.4): layer 0
// factorises X into Z₀ (N × L₀) and U₀ (D × L₀); layer k ≥ 1 factorises
// Z_{k−1} into Z_k (N × L_k) and U_k (L_{k−1} × L_k), each under the
// Symmetric likelihood with its own λ_k. The joint is
//
//	p(X, Z₀…Z_K, U₀…U_K | λ) = p(X | Z₀, U₀, λ₀) · ∏_{k=1..K} p(Z_{k−1} | Z_k, U_k, λ_k)
//	                            · p(Z_K) · ∏_k p(U_k),
//
// with Bernoulli priors on the codes of every layer and on the top Z only:
// a Z below the top is generated by the layer above, which is its prior.
// Let c^k_nl = OR_j z^k_nj u^k_lj be the Boolean product of layer k at
// (cell n, unit l of layer k−1). The variable z^k_nl (k < K) appears in
// two factors: as a latent variable of layer k, through the products
// c^k_nd' of its row over the units d' of layer k−1 (genes for k = 0), and
// as the datum (n, l) of layer k+1, in the single factor
// σ(λ_{k+1} · z̃^k_nl · (2c^{k+1}_nl − 1)), which does not involve any
// other z^k. Its full conditional is therefore the single-layer one with
// the prior's logit replaced by the log-ratio of that factor at z = 1 and
// z = 0,
//
//	log σ(λ_{k+1}(2c−1)) − log σ(−λ_{k+1}(2c−1)) = λ_{k+1} · (2c^{k+1}_nl − 1),
//
// so that
//
//	logit p(z^k_nl = 1 | ·) = λ_k · Σ_{d'} x̃^k_nd' u^k_d'l ∏_{l'≠l}(1 − z^k_nl' u^k_d'l')
//	                          + λ_{k+1} · (2c^{k+1}_nl − 1),
//
// x̃^k the layer's data in ±1 (X for k = 0, Z_{k−1} otherwise; only X has
// missing entries). For the top layer the second term is logit(p_l) of
// its Bernoulli prior. The codes u^k_d'l appear in layer k's factor only,
// so their conditional is the single-layer one with Z_{k−1} as data; z of
// the top layer likewise. λ_{k+1}(2c − 1) is +λ_{k+1} when the layer above
// predicts the unit on and −λ_{k+1} when it predicts it off: the Z step
// adds it to each code's logit from the product, which is recomputed (a
// Boolean product of N × L_{k+1} by L_{k+1} × L_k bits) before the layer's
// sweep; Z_{k−1} is copied into layer k's data the same way. Each λ_k is
// set after its layer's sweep from its own data, σ(λ̂_k) = P_k/(N·L_{k−1})
// (P₀/observed for the data layer).
//
// Training follows the paper: during burn-in every sweep updates each
// layer in turn from the data up (a systematic-scan Gibbs sampler of the
// joint, exact with LayersConfig.FixLambda); then each layer in turn,
// from the data up, runs Samples sweeps with the others held fixed (the
// layers below at their MAP, set when their samples end; the layers above
// where the burn-in left them) and is set to its MAP in turn. The tests
// compare both phases with the enumerated posterior of a 2 × 3 two-layer
// problem (layers_test.go). LayersResult.Prototypes feeds a one-hot code
// of layer k down to the data through the MAP codes: each unit below is on
// with probability σ(±λ) and a datum is on with probability
// σ(−λ_m) + (σ(λ_m) − σ(−λ_m))·P(covered), exact for the two lowest layers
// and treating the units of a layer as independent above. Layer k's draws
// are keyed by a seed derived from (seed, k), so the schedule is
// bit-identical for any number of workers and across MarshalBinary and
// UnmarshalBinary.
//
// # Bit-packed kernel
//
// X is read by cell rows for the Z step and Xᵀ by gene rows for the U step.
// Z and U are kept transposed as L bitsets each, interleaved by word. For a
// row with active codes A, the columns covered by exactly one code of A
// (cov1) and by two or more (cov2) are built word by word in registers; code
// l's counts are then o = popcount(x ∧ S ∧ obs) and |S| = popcount(S ∧ obs)
// with S = U_l ∧ ¬cov2 if l ∈ A and S = U_l ∧ ¬(cov1 ∨ cov2) if not, packed
// in one word (o in the low 32 bits). The same pass counts the mispredicted
// observed entries, popcount((x ⊕ (cov1 ∨ cov2)) ∧ obs), and the covered
// ones, popcount((cov1 ∨ cov2) ∧ obs), so the step yields the parameters'
// counts at no extra cost. With per-cell levels the U step's kernel also
// counts popcount(x ∧ S ∧ obs ∧ P_j) over the levels' bit planes P_j. After a flip
// the pass is repeated for the codes still to be visited, unless the flipped
// code's bitset over the columns is empty: such a code (one no cell uses, in
// the U step) covers nothing, so its flip leaves every other sum unchanged,
// and its own sum is 0 without a pass. Under a uniform prior an unused code's
// gene bits all flip every sweep, so this saves most re-scans. Workers own
// contiguous blocks of 64 rows, so no two write the same word, and update
// them 16 at a time: a group's passes walk the column segments in order,
// reading the group's words of each segment (side by side in a tile of Xᵀ)
// together. There are no locks and no allocations in the loop.
//
// On amd64 CPUs with AVX-512 or AVX2 the package uses a vector kernel
// (kernel_amd64.go, kernel_amd64.s, coversums_amd64.h, kernel_avx2_amd64.s)
// that does the same sums 8 (AVX2: 4) words at a time, over a code-major
// copy of the column codes made once per step, counting ones with VPOPCNTQ
// or, on CPUs without VPOPCNTDQ, with a nibble table. Kernels lists the
// kernels the CPU runs, fastest first; a Sampler takes the fastest unless
// Config.Kernel names another. Every kernel gives results bit-identical to
// the pure-Go one, which every other CPU and the purego build tag use. On
// the development machine (2 cores, planted 1.3M cells × 11k genes) the
// vector kernels sweep about 2.3–4× faster than the pure-Go one at L = 2
// and 3–6× at L = 10 (see BENCHMARKS.md).
//
// # Reproducibility
//
// Every random number is a SplitMix64 hash of (seed, sweep, step, variable
// index n·L + l), and every total that feeds a result (flips, P, and hence λ
// and the log-likelihood) is an integer. Results are therefore bit-identical
// for any number of workers and any segmentation of X and Xᵀ. The full state
// (chains, λ, sweep, posterior counts, retained samples, trace) is encoded by
// Sampler.MarshalBinary; a Sampler restored with UnmarshalBinary continues
// exactly as the uninterrupted one would.
//
// # Multiple starts
//
// A single chain from a random start can settle in a poor mode (on planted
// 1000 × 1000, L = 5 data with 5% noise, about one seed in three ends with
// accuracy near 0.94, as the authors' implementation does). With
// Config.Starts = k, k chains keyed by seeds derived from Config.Seed run for
// the first Config.StartSweeps burn-in sweeps; the one with the highest
// log-likelihood after the last of them is kept and continued, the others are
// dropped. The choice happens during burn-in, so the retained samples still
// come from a valid chain. The default is 4 starts of 10 sweeps (`scpipe
// fit`'s: 4 of 5, in a shorter burn-in; see DefaultConfig).
//
// # Initialisation
//
// InitRandom (the default, as in the paper) draws every bit by a fair coin.
// On sparse data such a start's codes explain nothing, so the first Z step
// switches almost every code off and the chain settles near the empty
// factorisation (planted 4000 × 600 data of density 7% are reconstructed
// with accuracy 0.96 instead of 1.00). InitData seeds each code from the
// uncovered ones of a cell chosen among random candidates (see InitData) and
// recovers the planted codes. On real cells a code seeded from one cell
// follows that cell's depth as much as its type; InitCluster seeds the codes
// from cell types (bisecting k-means of up to 4000 cells, cluster.go), which
// on pbmc3k-600 gives the B-cell and NK codes that the other starts miss.
// scpipe fit uses InitCluster.
//
// # Re-seeding idle codes
//
// Config.Reseed (scpipe fit's default) is a burn-in heuristic.
//
// A code whose U column is empty covers no entry whatever cells use it,
// and one that no cell uses covers none whatever its genes: the data then
// say nothing about its bits, and a single-site sampler cannot grow it
// into a program, since a gene joins a code only for the cells already
// using it and a cell joins only for the genes already in it. Planted
// OrMachine data show the trap (VALIDATION.md): the cell-type start of
// 3,000 cells using 4 overlapping programs clusters the cells that use
// none apart, so one cluster has no distinctive genes and its code starts
// empty; the other codes take their programs within a sweep, and the
// empty code stays empty through every later sweep while a planted
// program's ones go unexplained.
//
// Some starts go further wrong: two programs merged in one code, which
// the cells of either use, beside an empty code. No single bit moves that
// state either: the merged code's genes cover each cell's ones, and the
// other program's genes, covered zeros in its cells, cost the likelihood
// less than uncovering them in the cells that use both.
//
// Twice in the burn-in (schedule.go: once the multi-start phase has kept
// its chain, or before sweep 1 of a single start; then reseedEvery sweeps
// later), as long as reseedEvery burn-in sweeps still follow, up to
// reseedAtOnce codes that are neither clamped nor fixed and cover nothing
// are re-seeded. Up to clusterSample cells are drawn with a key of the
// chain's seed and the sweep, and two kinds of move are weighed by the
// log-likelihood they gain at the chain's rates:
//
//   - from the residual (residualMoves): the cells' observed ones that no
//     code of theirs covers are clustered as the cell-type start clusters
//     cells (bisect), always splitting the cluster that holds the most of
//     them, and a cluster's genes are those detected in its uncovered
//     entries often enough that covering them gains likelihood, and
//     distinctively (twice as often, plus 5 points, as elsewhere);
//   - by a split (splitMoves): the cells using a code are split in two by
//     their ones among its genes, and the genes distinctive of one side
//     move to the idle code; its gain is that of uncovering them in the
//     other side's cells, which lack them.
//
// The best moves seed the idle codes, each code split at most once. A
// move needs 5 genes or more (minMoveGenes) and a positive gain, so a
// state whose unexplained ones are noise keeps its idle codes: they stay
// empty where the data hold no more programs. A seeded code's cells are
// then its conditionals' business: the next Z step decides them (with
// per-cell levels, whose sweeps update U first, a Z step given the new
// codes follows at once, as a seeded start's does).
//
// The moves change the state only during the burn-in, as the start does;
// the sampling sweeps are the sampler's own, so the retained samples are
// those of a valid MCMC sampler begun from the re-seeded state. Every draw
// is keyed by the chain's seed and the sweep, and the sampled cells' rows
// are summed across the processes of a partitioned fit, so the chain does
// not depend on the number of workers or processes.
//
// # Fits across processes
//
// A PartSampler (NewPartSampler) is one of several processes (MPI ranks)
// that share a fit, each owning a contiguous range of cells: its part of
// both orientations of the data, and of Z; a Reducer (element-wise integer
// sums) joins them. Every process holds all of U and updates it
// identically, so that the chain is the single-process chain bit for bit:
//
//   - Z step: a cell's conditionals need only its row and U, so each
//     process updates its own cells (draws keyed by the global cell index).
//   - U step: a gene's conditionals are sums over all cells. Code by code
//     (l = 0 … L−1), each process sums the counts that code l alone decides
//     over its cells for every gene, given the gene's codes decided so far,
//     one Reducer.SumInt64 adds them, and every process decides code l of
//     every gene from the same totals and the same counter-based draw. A
//     gene whose coverage a flip changes is rescanned (over the process's
//     cells) for its later codes, as a single process rescans it; the
//     counts are integers, so the order of the sums changes nothing.
//   - Rates and statistics: one sum of the sweep's integer counts.
//
// A process holds the state of its own cells only (their words of Z, their
// levels, Z's posterior counts): its memory grows with its cells, plus the
// genes' state, which every process holds. Gather collects the whole of Z
// into the first process, whose Whole is a single process's Sampler for
// Result and MarshalBinary; checkpoints go in pieces (MarshalShared,
// MarshalPart: partstate.go). A reduction takes no context, since a
// process that abandoned one would leave the others waiting in it: Run
// stops every process between the same two sweeps when any one's context
// is done.
//
// The U step thus costs L reductions of D words per sweep, plus one of a
// few words; the counts of a code are packed as packCounts does (ones in
// the low half, entries in the high), which holds while a gene has fewer
// than 2³² observed entries.
//
// Checkpoints of a partitioned fit come in pieces, so that no process
// needs the others' cells to write one: MarshalShared encodes what every
// process holds alike (U, the rates, the trace, the posterior counts of
// U), with Z, the cells' levels and Z's posterior counts left at zero, and
// each process's MarshalPart encodes those for its own cells. A Sampler
// restores the shared state with UnmarshalBinary and then any set of
// parts, on any number of processes: each process needs the parts that
// hold its cells, a single process all of them.
//
// # Posterior summaries and prediction
//
// Posterior means of Z and U are averaged over the retained (every Thin-th
// sample-phase) states; the MAP is mean ≥ 1/2. Result.Predict gives
// P(x_nd = 1) either by plugging the means into the likelihood (PlugIn, the
// paper's fast path) or by averaging p(x_nd | Z⁽ˢ⁾, U⁽ˢ⁾, λ⁽ˢ⁾) over the
// retained states (SampleMean, which needs Config.KeepSamples).
// Result.MarshalSamples encodes the retained states for another process,
// whose UnmarshalSamples gives a Samples that predicts the same.
//
// # Example
//
//	data, err := gibbs.NewData(x, nil, 0) // x: a *gibbs.Matrix or any BitMatrix
//	if err != nil { … }
//	cfg := gibbs.DefaultConfig()
//	cfg.L = 5
//	s, err := gibbs.NewSampler(ctx, data, cfg)
//	if err != nil { … }
//	err = s.Run(ctx, func(st gibbs.SweepStats) error {
//		state, err := s.MarshalBinary() // checkpoint between sweeps
//		…
//	})
//	res, err := s.Result()
//	p, err := res.Predict(cell, gene, gibbs.PlugIn)
//
// The package reads data only through the BitMatrix interface, which the
// memory-mapped shards satisfy; it writes no files.
package gibbs
