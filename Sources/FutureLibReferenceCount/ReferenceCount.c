// The target's one function is `static inline`, in its header; SwiftPM needs a source file.
#include "FutureLibReferenceCount.h"
