// Package enrich turns a run directory into gene programs and their biology.
package enrich
