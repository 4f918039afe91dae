// Declarations only (include/CFuzzDriver.h): LLVMFuzzerRunDriver lives in libFuzzer's runtime.
#include "CFuzzDriver.h"
