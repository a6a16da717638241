// Package eval holds the evaluation protocols of batchsampler-go that do not
// need Gorgonia: GraphCL's SVM protocol (an RBF-kernel C-SVC whose C is
// chosen by an inner stratified 5-fold grid search inside a stratified
// 10-fold cross-validation), scikit-learn-compatible stratified folds, and
// small statistics helpers (mean ± std, paired t test, Wilcoxon signed-rank
// test) for comparing runs; and the STS protocol of sentence embeddings
// (Spearman correlation × 100 of cosine similarities, STSScore) with its two
// model-free baselines (averaged word vectors, TF-IDF cosine).
//
// The SVM is a port of the LIBSVM solver that scikit-learn ships (SMO with
// second-order working-set selection, shrinking, float32 kernel cache,
// one-vs-one voting), so fits agree with sklearn.svm.SVC to rounding; the
// fixture in testdata/ and sklearn_reference.py check that.
package eval
