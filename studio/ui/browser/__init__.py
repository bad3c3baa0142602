"""Browser: the repository tree (models, versions, files) with framework icons and finding badges, and its
filter. Observes studio.repository.Repository and the validator's repository findings."""
