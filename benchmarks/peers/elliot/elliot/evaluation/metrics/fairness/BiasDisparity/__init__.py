from .BiasDisparityBR import BiasDisparityBR
from .BiasDisparityBS import BiasDisparityBS
from .BiasDisparityBD import BiasDisparityBD