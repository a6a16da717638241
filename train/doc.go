// Package train pairs data, a contrastive method and an evaluation protocol,
// runs the training loop with its named hooks (loop.go, hooks.go),
// checkpoints, and writes the run directory: config.yaml, provenance.json,
// metrics.jsonl, metrics.csv, results.json, results.md and plots/ (none
// when no step was trained). Evaluate scores a finished run directory again
// and Embed writes a trained encoder's embeddings of any dataset of its
// modality.
//
// A config chooses each of them by name, from what the files of this
// package register:
//
//   - the data (modality and data.source): graph (tu, gin, synthetic;
//     data_graph.go), image (cifar10, cifar100, cifar100-coarse, idx,
//     stl10, folder, synthetic; data_image.go) and text (corpus;
//     data_text.go);
//   - the method (method): graphcl (graphcl.go) and mvgrl (mvgrl.go) on
//     graphs, simclr (simclr.go) and mocov3 (mocov3.go) on images, simcse
//     (simcse.go) on text; the encoder (model.kind) follows from it: gin,
//     gcn, resnet or mlp;
//   - the evaluation protocol (eval.kind): svm on graphs (protocol_svm.go),
//     linear_probe or knn on images (protocol_probe.go), sts on text
//     (protocol_sts.go).
//
// A method, a modality or an evaluation protocol is added by a file with a
// type implementing Method, Dataset or Protocol and one RegisterMethod,
// RegisterData or RegisterProtocol call; the loop needs no edit (see
// docs/extending.md, "How it fits together"). A method's own model keys are
// a struct in its file inlined in ModelConfig (ResNetModel, MomentumModel,
// TextModel, MVGRLModel). A method may be written outside this package: a
// graph method reads its data through GraphData (momentum_method_test.go,
// package train_test, is one).
package train
