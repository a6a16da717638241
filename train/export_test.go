package train

import "maps"

// What the external tests (package train_test) may use besides the API:
// a test's registrations undone, and a run's checkpoint inspected.

// UnregisterMethod removes a method a test registered.
func UnregisterMethod(name string) { delete(methodSpecs, name) }

// CheckpointParams returns the names of the parameters and buffers a
// run's checkpoint file holds.
func CheckpointParams(path string) ([]string, error) {
	c, err := loadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for n := range maps.Keys(c.Params) {
		names = append(names, n)
	}
	return names, nil
}
