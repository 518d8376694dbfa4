import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

