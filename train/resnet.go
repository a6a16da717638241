package train

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/model"
)

// The ResNet encoder the image methods (simclr, mocov3) share: its model
// keys, checked and turned into a model.ResNetConfig.

// ResNetModel holds the model keys of the ResNet encoder of methods simclr
// and mocov3 (config key model; inlined in ModelConfig).
type ResNetModel struct {
	// Arch names a ResNet preset (resnet8, resnet14, resnet20,
	// resnet18-narrow) for model.kind resnet; Widths and Blocks, when given,
	// override the preset's stage widths and blocks per stage.
	Arch   string `yaml:"arch"`
	Widths []int  `yaml:"widths"`
	Blocks []int  `yaml:"blocks"`
	// Stem is the ResNet's stem: "cifar" (default: 3×3 convolution, stride
	// 1, no pooling) or "imagenet" (7×7 stride 2 and a 3×3 stride-2
	// max-pool, for 96-pixel and larger images).
	Stem string `yaml:"stem"`
	// Conv is the algorithm of the ResNet's 3×3 stride-1 convolutions (8
	// or more channels in and out): "direct" (default: implicit GEMM, the
	// bits of im2col) or "winograd" (F(2×2, 3×3) for the forward pass, dX
	// and dW: fewer multiplications, 1.1–1.2× faster steps here; the same
	// function to float32 rounding, so other bits than direct).
	Conv string `yaml:"conv"`
	// ProjHidden is the projection head's hidden width (resnet; 0 = the
	// encoder's output width).
	ProjHidden int `yaml:"proj_hidden"`
}

// embedBatch is the batch size of evaluation-mode forward passes.
const embedBatch = 256

// validateResNetEncoder checks the keys of the ResNet encoder that the
// image methods share: model.kind, stem, conv, arch, widths and blocks.
func validateResNetEncoder(c *Config) []string {
	var errs problems
	add := errs.add
	add(oneOf("model.kind", c.Model.Kind, "resnet"))
	add(oneOf("model.stem", c.Model.Stem, "", "cifar", "imagenet"))
	add(oneOf("model.conv", c.Model.Conv, "", "direct", "winograd"))
	if _, err := model.ResNetPreset(c.Model.Arch); err != nil {
		errs = append(errs, "model.arch: "+err.Error())
	}
	if len(c.Model.Widths) != len(c.Model.Blocks) {
		errs = append(errs, fmt.Sprintf("model.widths, model.blocks: give both with the same length (got %d and %d)", len(c.Model.Widths), len(c.Model.Blocks)))
	}
	for i := range c.Model.Widths {
		add(positive(fmt.Sprintf("model.widths[%d]", i), c.Model.Widths[i]))
	}
	for i := range c.Model.Blocks {
		add(positive(fmt.Sprintf("model.blocks[%d]", i), c.Model.Blocks[i]))
	}
	return errs
}

// resnetConfig is the ResNet of the model section for images of the given
// channels: the preset of model.arch, model.widths and blocks when given,
// and the stem.
func resnetConfig(cfg *Config, channels int) (model.ResNetConfig, error) {
	rc, err := model.ResNetPreset(cfg.Model.Arch)
	if err != nil {
		return rc, fmt.Errorf("model.arch: %w", err)
	}
	if len(cfg.Model.Widths) > 0 {
		rc.Widths, rc.Blocks = cfg.Model.Widths, cfg.Model.Blocks
	}
	rc.InChannels, rc.ImageNetStem = channels, cfg.Model.Stem == "imagenet"
	rc.Winograd = cfg.Model.Conv == "winograd"
	return rc, nil
}
