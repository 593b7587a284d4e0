/// In which order a scale test cancels its tokens: that of the registrations, the reverse, or a
/// random one.
package enum CancelOrder: String, CaseIterable, Sendable {
    case registration, reverse, random
}
