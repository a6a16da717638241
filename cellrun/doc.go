// Package cellrun runs the cells of a grid of experiments (the paper's
// tables of package table, the sweeps of package sweep): each cell is a
// train.Config run in a directory of its own under the grid's directory.
//
// Run runs cells one after another and resumes where it stopped: a cell
// finished earlier is read, not run again; an interrupted one resumes from
// its checkpoints; a cell whose directory holds a run of another config is
// refused (ErrConfigChanged). Read reads what is finished without running
// anything.
//
// Many processes may share one grid directory (the tasks of an array job,
// each with its Shard of the cells): every cell runs under a lock file
// beside its directory (flock on Unix, released when its holder dies), a
// cell another process holds is skipped (ErrBusy), and the grid's own files
// are written with WriteAtomic, which never lets two writers mix.
//
// Summary, Minutes and PText are what every assembled grid reports besides
// its cells.
package cellrun
