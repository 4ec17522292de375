"""The documentation: the site builds, its commands run, the generated reference is current."""
