/// State that lives on the main actor, as a view model's does.
@MainActor
package final class MainActorLog {
    package var entries: [Int] = []
    package var errors: [any Error] = []

    nonisolated package init() {}
}
