package rundir

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
)

// Files of a multi-layer fit (scpipe fit --layers), beside the first
// layer's codes, cells and trace in the fit directory.
const (
	LayersFile      = "layers.tsv"         // fit: one row per layer
	PrototypesFile  = "prototypes.parquet" // layer: per gene, each code fed forward to the data
	LayerCodesFile  = "codes.tsv"          // layer k ≥ 2: per code of layer k−1, posterior mean of U_k
	layerDirPattern = "layer%d"            // RUN/Lnn/chainK/layer2
)

// LayerDir returns the folder of layer k (1-based) of the fit in fitDir.
func LayerDir(fitDir string, k int) string {
	return filepath.Join(fitDir, fmt.Sprintf(layerDirPattern, k))
}

// LayerRow describes one layer of a multi-layer fit in layers.tsv.
type LayerRow struct {
	Layer, L int
	// Lambda is the layer's λ after its last sample sweep; SigmaLambda is
	// σ(λ), the fraction of the layer's data the model expects to
	// explain; Accuracy the fraction it explained after that sweep.
	Lambda, SigmaLambda, Accuracy, LogLik float64
	Samples                               int
}

var layersHeader = "layer\tL\tlambda\tsigma_lambda\taccuracy\tloglik\tsamples\n"

// WriteLayers writes rows to path as layers.tsv, atomically, its SHA-256
// recorded in the folder's ChecksumsFile as a table's is.
func WriteLayers(path string, rows []LayerRow) error {
	return WriteChecksummed(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.WriteString(layersHeader)
		var line []byte
		for _, r := range rows {
			line = strconv.AppendInt(line[:0], int64(r.Layer), 10)
			line = append(line, '\t')
			line = strconv.AppendInt(line, int64(r.L), 10)
			for _, f := range []float64{r.Lambda, r.SigmaLambda, r.Accuracy, r.LogLik} {
				line = append(line, '\t')
				line = appendFloat(line, f)
			}
			line = append(line, '\t')
			line = strconv.AppendInt(line, int64(r.Samples), 10)
			line = append(line, '\n')
			bw.Write(line)
		}
		return bw.Flush()
	})
}

// WriteLayerCodes writes the codes of a layer above the first to path as
// a TSV, atomically: a header "unit" then code_1 … code_L, then one line
// per unit of the layer below (named units[i]) holding the posterior mean
// of its u in each code (mean is units × L, row-major); its SHA-256 is
// recorded in the folder's ChecksumsFile.
func WriteLayerCodes(path string, units []string, L int, mean []float64) error {
	if len(mean) != len(units)*L {
		return fmt.Errorf("rundir: %s: %d means for %d units × %d codes", path, len(mean), len(units), L)
	}
	return WriteChecksummed(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.WriteString("unit")
		for k := range L {
			bw.WriteString("\t" + codeName(k))
		}
		bw.WriteByte('\n')
		var line []byte
		for i, u := range units {
			line = append(line[:0], u...)
			for _, v := range mean[i*L : i*L+L] {
				line = append(line, '\t')
				line = appendFloat(line, v)
			}
			line = append(line, '\n')
			bw.Write(line)
		}
		return bw.Flush()
	})
}
