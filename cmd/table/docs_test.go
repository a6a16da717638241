package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestScaleOutManifests parses the Kubernetes manifests of
// docs/scale-out.md: indexed Jobs whose command splits the work into as
// many parts as the Job has completions, by $JOB_COMPLETION_INDEX.
func TestScaleOutManifests(t *testing.T) {
	b, err := os.ReadFile("../../docs/scale-out.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	if len(blocks) != 2 {
		t.Fatalf("docs/scale-out.md has %d yaml blocks, want 2 (table, graph)", len(blocks))
	}
	for i, blk := range blocks {
		var job struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string
			Spec       struct {
				CompletionMode string `yaml:"completionMode"`
				Completions    int
				Template       struct {
					Spec struct {
						RestartPolicy string `yaml:"restartPolicy"`
						Containers    []struct {
							Command []string
						}
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(blk[1]), &job); err != nil {
			t.Fatalf("block %d: %v\n%s", i, err, blk[1])
		}
		if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Template.Spec.RestartPolicy != "Never" || len(job.Spec.Template.Spec.Containers) != 1 {
			t.Fatalf("block %d is not an indexed batch/v1 Job of one container: %+v", i, job)
		}
		cmd := strings.Join(job.Spec.Template.Spec.Containers[0].Command, " ")
		n := job.Spec.Completions
		if !strings.Contains(cmd, "$JOB_COMPLETION_INDEX") || !(strings.Contains(cmd, fmt.Sprintf("/%d", n)) || strings.Contains(cmd, fmt.Sprintf("n=%d", n))) {
			t.Errorf("block %d: the command %q does not split by $JOB_COMPLETION_INDEX into %d parts", i, cmd, n)
		}
	}
}
