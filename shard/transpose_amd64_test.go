//go:build amd64 && !purego

package shard

func init() {
	if useGFNI {
		transposeImpls["gfni"] = transpose64GFNI
	}
}
