// The definition that dlsym(RTLD_NEXT) from next_first must find.
extern "C" int wavekit_probe_value() { return 2; }

// Referenced by the check program so that the linker keeps this library loaded.
extern "C" int wavekit_probe_second_loaded() { return 1; }
