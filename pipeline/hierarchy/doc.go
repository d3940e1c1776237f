// Package hierarchy infers the hierarchy between fits by fixed codes, the
// paper's (section 5.2, Fig. calc_hier): an OrMachine whose data are the
// codes of the model of size L (one row per code, one column per gene) and
// whose codes are those of the model of size L′ > L, every one fixed. Only
// Z (L × L′) and λ are inferred, and z_ij says whether code j of L′ is a
// part of code i of L. Given λ the rows of Z are independent, and each is
// drawn towards the union of L′ codes that differs least from its code of
// L: its best cover. Package enrich, which never runs the sampler, builds
// the hierarchy of a run's programs through the Linker it is handed:
//
//	o := enrich.DefaultOptions()
//	o.Hierarchy, o.Linker = hierarchy.Default, hierarchy.Linker(hierarchy.DefaultOptions())
package hierarchy
