package report

import "fmt"

// percent formats a fraction as a percentage.
func percent(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case f < 0.001:
		return "<0.1%"
	case f < 0.1:
		return fmt.Sprintf("%.1f%%", 100*f)
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}
