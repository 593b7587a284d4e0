#ifndef FUTURELIB_REFERENCE_COUNT_H
#define FUTURELIB_REFERENCE_COUNT_H

#include <stdbool.h>

/// The Swift runtime function behind `isKnownUniquelyReferenced(_:)`: whether a native Swift object
/// has exactly one strong reference. Part of the runtime's stable ABI, a C function; Swift code that
/// names it (`@_silgen_name`) gets a warning that this will become an error.
extern bool swift_isUniquelyReferenced_nonNull_native(const void *_Nonnull object);

/// Whether `object` (a native Swift object's address, borrowed: no reference is taken) has exactly
/// one strong reference. `CancellationRequest.isReusable` asks it of a request and its core without
/// copying either into a variable, which `isKnownUniquelyReferenced(_:)` would need: the copy would
/// be a second reference. It reads the reference count and changes nothing.
static inline bool futurelib_is_only_strong_reference(const void *_Nonnull object) {
    return swift_isUniquelyReferenced_nonNull_native(object);
}

#endif
