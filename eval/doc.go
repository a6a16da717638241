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
//
// For image embeddings (SimCLR on CIFAR) there are two protocols on frozen
// features: a linear probe (TrainProbe, LinearProbe), multinomial logistic
// regression with an L2 penalty on standardised features, fitted to
// convergence by full-batch L-BFGS (gonum/optimize) with a float64 objective
// computed in parallel and reduced in a fixed order; and the weighted kNN
// monitor of InstDis and the SimCLR repositories (KNNAccuracy: cosine top-k,
// k = 200, votes exp(sim/0.1)), cheap enough to log every epoch thanks to
// blocked float32 GEMMs and a streaming top-k heap.
//
// Why written by hand: no Go package implements LIBSVM's solver, and
// GraphCL's protocol is scikit-learn's SVC and GridSearchCV; the port gives
// scikit-learn's fits and accuracies (the fixture above), and its hot loops
// (the two SMO loops, the RBF kernel's exp, kernel rows and gathers) are
// AVX-512 kernels tested bit for bit against the scalar code.
// docs/dependencies.md lists every hand-written part of the module.
package eval
