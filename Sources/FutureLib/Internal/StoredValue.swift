/// A future's value, held so that the future's state has the same layout whatever `Value` is.
///
/// Why: `Future.deinit` is never specialized. When the state's layout depends on `Value` (a
/// `Result<Value, any Error>` inside it), destroying it needs the state's generic metadata, a
/// runtime cache lookup in every deinit (guarded by callgrind `futurelib-map`). With the value
/// in two words of raw bytes (or a box), the state is a fixed-layout value that the deinit
/// destroys inline, and the deinit destroys the raw value itself with `Value`'s own metadata,
/// which the future's class metadata holds (no lookup), and not at all when `Value` is trivial.
///
/// ### Ownership
/// `.inline`'s bits own one copy of the value, like an existential's buffer: copying the enum
/// copies the bits, not the value, so exactly one place destroys it — the future's `deinit`
/// (a future's result never changes, so nothing else overwrites it). Only a value that may be
/// moved bitwise and fits in the two words is inline; any other is in a ``ValueBox``, whose own
/// `deinit` destroys it (an allocation per completion for such values, as a `Result` in an
/// existential would cost).
@usableFromInline
enum StoredValue: Sendable {
    case inline(InlineBits)
    case boxed(any AnyObject & Sendable)

    /// Two words of raw bytes: the storage of an inline value.
    @usableFromInline
    struct InlineBits: Sendable {
        @usableFromInline var word0: UInt = 0
        @usableFromInline var word1: UInt = 0

        @inlinable
        init() {}
    }

    /// Whether a `Value` is stored inline; a constant in specialized code.
    @inlinable
    static func isInline<Value>(_: Value.Type) -> Bool {
        MemoryLayout<Value>.size <= MemoryLayout<InlineBits>.size
            && MemoryLayout<Value>.alignment <= MemoryLayout<InlineBits>.alignment
            && _isBitwiseTakable(Value.self)
    }

    /// Stores a copy of `value`.
    @inlinable
    init<Value: Sendable>(_ value: Value) {
        guard Self.isInline(Value.self) else {
            self = .boxed(ValueBox(value))
            return
        }
        var bits = InlineBits()
        withUnsafeMutableBytes(of: &bits) {
            _ = $0.baseAddress!.initializeMemory(as: Value.self, repeating: value, count: 1)
        }
        self = .inline(bits)
    }

    /// A copy of the stored value, which must be a `Value`.
    @inlinable
    func value<Value: Sendable>(as _: Value.Type) -> Value {
        switch self {
        case .inline(var bits):
            // A raw load, which may read memory bound to another type: `bits`, a copy, is bound to
            // `InlineBits`, so a typed pointer to `Value` into it would break Swift's binding rules.
            return withUnsafeBytes(of: &bits) { $0.load(as: Value.self) }
        case .boxed(let box):
            return unsafeDowncast(box, to: ValueBox<Value>.self).value
        }
    }

    /// Destroys an inline value, which must be a `Value`; only the owning future's `deinit` calls
    /// it. (A box is released with the enum.)
    @inlinable
    func destroyInline<Value>(as _: Value.Type) {
        guard case .inline(var bits) = self else { return }
        withUnsafeMutableBytes(of: &bits) {
            _ = $0.baseAddress!.bindMemory(to: Value.self, capacity: 1).deinitialize(count: 1)
        }
    }
}

/// A value that ``StoredValue`` does not keep inline.
@usableFromInline
final class ValueBox<Value: Sendable>: Sendable {
    @usableFromInline let value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
