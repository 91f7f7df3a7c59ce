"""The HTML report: a model of formatted values first, then a template that lays it out."""
