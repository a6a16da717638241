package sampler

// Embedding sources of Spec.Embedding (the default, also meant by "", is
// EmbedProjection).
const (
	// EmbedProjection: the whole dataset re-embedded by the current model
	// (projection head output) at every refresh.
	EmbedProjection = "projection"
	// EmbedEncoder: the same with the encoder's output.
	EmbedEncoder = "encoder"
	// EmbedCached: the projections of the first view computed during
	// training (Driver.Observe), kept per instance; the dataset is embedded
	// (EmbedProjection) only for the first refresh.
	EmbedCached = "cached"
)

// EmbeddingSources lists the allowed values of Spec.Embedding, the default
// first.
var EmbeddingSources = []string{EmbedProjection, EmbedEncoder, EmbedCached}
