print("demo: coming soon")
