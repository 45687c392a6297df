/** GeoIP: country/region/city of a client IP from an MMDB file, continents. Other modules import this file only. */
export { CONTINENTS, continentOfCountry } from './continents'
export { createGeoIp, type GeoIp, UNKNOWN_LOCATION } from './geoip'
