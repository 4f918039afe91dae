// The GIF synthesizer is a module of its own (GIFSynthesis), so that the format's tests use it
// without compiling the fixture server; a fixture user's `import ExerciseDBFixture` still gets it.
@_exported import GIFSynthesis
