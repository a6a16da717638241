// Package paper holds what the KDD'23 paper reports that more than one grid
// of experiments reads: the type of its numbers (Reported, mean ± std as
// printed) and the appendix's settings of its seven graph datasets
// (GraphAppendix), which package table runs its graph table with and
// package sweep recognises in a sweep's points to set the paper's
// sensitivity numbers beside them.
//
// The numbers of the paper's result tables are in the packages that print
// them beside their cells (table.PaperGraph, table.PaperText,
// table.PaperImage; the sensitivity tables in sweep).
package paper
