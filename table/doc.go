// Package table reproduces the paper's result tables from one command: the
// settings of its appendix for each dataset, the numbers it reports, a grid
// of experiments (dataset × method block, each with the Uniform, kNN
// Sampler and BatchSampler rows) that runs one cell after another (cellrun), resumes
// where it stopped and never redoes a finished cell, and the assembled table
// in the paper's layout with the paper's number and the paired test against
// the method alone beside every cell.
//
// The graph table (PlanGraphs, cellrun.Run, AssembleGraphs) covers GraphCL,
// DCL, HCL and MVGRL on any TU dataset under the data root; the seven of
// the paper get its appendix settings (PaperGraphSettings), any other
// DefaultGraphSettings.
//
// The text table (PlanText, cellrun.Run, AssembleText) runs SimCSE, DCL and
// HCL as the shipped configs/simcse-stsb*.yaml (TextConfigFiles), scored on
// SimCSE's seven STS tasks, beside the paper's numbers (PaperText).
package table
