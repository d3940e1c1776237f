package h5gen

// WriteH5ADCSR writes an AnnData (>= 0.8 layout) file whose X is a CSR
// matrix of cells × genes:
//
//	/X            group, attrs encoding-type="csr_matrix", encoding-version="0.1.0", shape=[rows, cols] (int64)
//	/X/data, /X/indices, /X/indptr
//	/obs, /var    groups, attrs encoding-type="dataframe", encoding-version="0.2.0", _index="_index", column-order=[]
//	/obs/_index, /var/_index   variable-length strings
//
// Data defaults to float32 and indices to int64 (Options.IndexType "int32"
// gives what anndata writes for small matrices). scigolib writes string
// attributes as fixed-length strings where anndata writes variable-length
// ones, and cannot write the root attributes encoding-type="anndata"; and
// column-order, an empty array in anndata, is omitted because scigolib
// refuses empty attributes.
func WriteH5ADCSR(path string, x CSR, obsNames, varNames []string, o Options) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	b, err := create(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			b.abort()
		}
	}()
	o = withDefaults(o, "float32")
	if err := b.sparse("/X", x.Indptr, x.Indices, x.Data, o); err != nil {
		return err
	}
	for _, a := range []RawAttr{
		{"/X", "encoding-type", "csr_matrix"},
		{"/X", "encoding-version", "0.1.0"},
		{"/X", "shape", []int64{int64(x.Rows), int64(x.Cols)}},
	} {
		if err := b.attr(a.Path, a.Name, a.Value); err != nil {
			return err
		}
	}
	for _, df := range []struct {
		path  string
		names []string
	}{{"/obs", obsNames}, {"/var", varNames}} {
		if err := b.strings(df.path+"/_index", df.names, true); err != nil {
			return err
		}
		for _, a := range [][2]string{{"_index", "_index"}, {"encoding-type", "dataframe"}, {"encoding-version", "0.2.0"}} {
			if err := b.attr(df.path, a[0], a[1]); err != nil {
				return err
			}
		}
	}
	return b.commit()
}
