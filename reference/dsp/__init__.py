"""Signal processing shared by the families (the spec of core/src/dsp/)."""
